"""The example dataset files the upload page offers import as they are, and say the same thing."""

from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "static" / "annotation" / "examples"


def _upload(client, filename, name):
    upload = SimpleUploadedFile(filename, (EXAMPLES / filename).read_bytes())
    response = client.post(reverse("annotation:dataset_upload"), {"name": name, "file": upload, "format": ""})
    assert response.status_code == 302, response.content.decode()
    return Dataset.objects.get(name=name)


def _content(dataset):
    contexts = {}
    for context in dataset.contexts.prefetch_related("references", "responses__system").order_by("position"):
        contexts[context.external_id] = (
            [(turn.get("speaker"), turn["text"]) for turn in context.turns],
            sorted(reference.text for reference in context.references.all()),
            sorted((response.system.name, response.text) for response in context.responses.all()),
            context.meta,
        )
    return contexts


def test_both_example_files_import_through_the_upload_page_into_the_same_dataset(researcher_client):
    from_jsonl = _content(_upload(researcher_client, "example-dataset.jsonl", "from-jsonl"))
    from_csv = _content(_upload(researcher_client, "example-dataset.csv", "from-csv"))
    assert from_jsonl == from_csv
    assert list(from_jsonl) == ["c1", "c2", "c3", "c4"]
    systems = {name for _turns, _refs, responses, _meta in from_jsonl.values() for name, _text in responses}
    assert systems == {"seq2seq", "retrieval", "human"}
    assert all(refs for _turns, refs, _responses, _meta in from_jsonl.values())


def test_the_upload_page_and_an_empty_dataset_list_link_the_example_files(researcher_client):
    for url in (reverse("annotation:dataset_upload"), reverse("annotation:dataset_list")):
        page = researcher_client.get(url).content.decode()
        assert "annotation/examples/example-dataset.jsonl" in page and "annotation/examples/example-dataset.csv" in page
