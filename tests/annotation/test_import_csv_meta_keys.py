"""A CSV `meta` cell cannot carry a key that is a column (or a JSONL key) of its own.

The context meta `{"context_id": "evil", "responses": []}` on a context's first row was kept,
and every export then wrote it over the real fields: the JSONL download named the context
"evil" with no responses, and a response meta `{"text": "forged"}` replaced the reply's text. The
import now refuses such a key (row and field named, nothing written); `metrics`, which export
writes for the reader, is ignored as in JSONL. Export also lets the real fields win over any meta
already stored.
"""

import html
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing import DataImportError, parse_dataset
from annotation.models import Context, Dataset, Response
from annotation.services.exporting import dataset_export
from tests.factories import load_dataset_records

HEADER = "context_id,kind,speaker,system,text,meta\n"


def csv_meta(meta):
    return '"' + json.dumps(meta).replace('"', '""') + '"'


def problems(content):
    with pytest.raises(DataImportError) as error:
        parse_dataset(content, "csv")
    return error.value.report_lines()


@pytest.mark.parametrize("key", ["context_id", "context", "references", "responses"])
def test_a_context_meta_key_that_is_a_field_of_its_own_is_refused(key):
    content = HEADER + f"c1,context,,,hello,{csv_meta({key: 'x'})}\nc1,response,,s1,reply,\n"
    assert problems(content) == [
        f"row 2, field 'meta': {key!r} is a field of its own, not meta; rename the key. Nothing was imported."
    ]


@pytest.mark.parametrize("key", ["system", "text"])
def test_a_response_meta_key_that_is_a_column_of_its_own_is_refused(key):
    content = HEADER + f"c1,context,,,hello,\nc1,response,,s1,reply,{csv_meta({key: 'forged'})}\n"
    assert problems(content) == [
        f"row 3, field 'meta': {key!r} is a field of its own, not meta; rename the key. Nothing was imported."
    ]


def test_metrics_in_a_csv_meta_cell_are_ignored_as_in_jsonl():
    content = HEADER + f"c1,context,,,hello,\nc1,response,,s1,reply,{csv_meta({'metrics': {'bleu4': 1}, 'k': 2})}\n"
    (context,) = parse_dataset(content, "csv")
    assert context.responses[0].meta == {"k": 2}


def test_the_upload_page_refuses_a_forging_meta_and_writes_nothing(client, researcher):
    client.force_login(researcher)
    content = HEADER + f"c1,context,,,hello,{csv_meta({'context_id': 'evil'})}\nc1,response,,s1,reply,\n"
    upload = SimpleUploadedFile("study.csv", content.encode())
    response = client.post(reverse("annotation:dataset_upload"), {"name": "study", "file": upload})
    assert "row 2, field 'meta': 'context_id' is a field of its own" in html.unescape(response.content.decode())
    assert not Dataset.objects.exists() and not Context.objects.exists() and not Response.objects.exists()


def test_export_keeps_the_real_fields_over_a_stored_meta_that_names_them(db):
    records = [{"context_id": "c1", "context": ["hello"], "responses": [{"system": "s1", "text": "reply"}]}]
    dataset = load_dataset_records(records=records, name="stored")
    # Stored before the import refused such keys.
    Context.objects.filter(dataset=dataset).update(meta={"context_id": "evil", "responses": [], "topic": "t"})
    Response.objects.filter(context__dataset=dataset).update(meta={"text": "forged", "temperature": 0.7})
    for fmt in ("jsonl", "csv"):
        out = io.StringIO()
        dataset_export(dataset=dataset, stream=out, fmt=fmt)
        (context,) = parse_dataset(out.getvalue(), fmt)
        assert context.external_id == "c1"
        assert [(r.system, r.text) for r in context.responses] == [("s1", "reply")]
        assert context.responses[0].meta == {"temperature": 0.7}
        assert context.meta == {"topic": "t"}
