"""A JSONL field holds at most as many characters as a CSV cell (131,072): a longer one is refused
with its line and field, and nothing is imported, from the commands and the upload forms alike
(security review 2026-11-29, point 8: a 10 MB turn made a 10 MB dataset page)."""

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.importing import parse_dataset, parse_ratings
from annotation.importing.text import MAX_FIELD_CHARS
from annotation.models import Context, Dataset, Rating, Response, Survey
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS
from tests.factories import load_dataset_records

LONG = "x" * (MAX_FIELD_CHARS + 1)
TOO_LONG = f"{MAX_FIELD_CHARS + 1:,} characters, longer than the 131,072 a field may hold"


def context_line(context_id="c1", turns=("hi",), responses=None, **extra):
    responses = responses or [{"system": "s", "text": "fine"}]
    return json.dumps({"context_id": context_id, "context": list(turns), "responses": responses, **extra})


def test_the_limit_is_the_csv_readers_cell_limit():
    assert MAX_FIELD_CHARS == csv.field_size_limit() == 131_072


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (context_line(turns=["hi", LONG]), "context[1]"),
        (context_line(turns=[{"speaker": "A", "text": LONG}]), "context[0].text"),
        (context_line(turns=[{"speaker": LONG, "text": "hi"}]), "context[0].speaker"),
        (context_line(references=["ok", LONG]), "references[1]"),
        (context_line(responses=[{"system": "s", "text": LONG}]), "responses[0].text"),
        (context_line(responses=[{"system": "s", "text": "t", "note": {"long": LONG}}]), "responses[0].note.long"),
        (context_line(topic=LONG), "topic"),
        (context_line(**{LONG: 1}), "x" * 40 + "… (the key)"),
    ],
    ids=["turn", "turn_text", "speaker", "reference", "response", "response_meta", "context_meta", "key"],
)
def test_a_jsonl_field_longer_than_a_csv_cell_is_refused_naming_line_and_field(line, where):
    text = "\n".join([context_line("c0"), line])
    with pytest.raises(Exception) as refused:
        parse_dataset(text, "jsonl")
    assert str(refused.value) == f"line 2, field '{where}': {TOO_LONG}"


def test_a_field_of_exactly_the_limit_is_imported():
    contexts = parse_dataset(context_line(turns=["x" * MAX_FIELD_CHARS]), "jsonl")
    assert len(contexts[0].turns[0]["text"]) == MAX_FIELD_CHARS


def test_escapes_count_as_the_characters_they_stand_for():
    # "\u00e9" is 6 characters in the line and 1 in the text: the limit is on the text
    line = context_line(turns=["é" * MAX_FIELD_CHARS]).replace("é", "\\u00e9")
    assert len(parse_dataset(line, "jsonl")[0].turns[0]["text"]) == MAX_FIELD_CHARS


def test_the_import_command_and_the_upload_form_refuse_a_ten_megabyte_turn_and_import_nothing(
    tmp_path, client, researcher
):
    text = "\n".join([context_line("c0"), context_line("c1", turns=["y" * 10_000_000])])
    path = tmp_path / "big.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_dataset", str(path), "--name", "study", stdout=io.StringIO())
    expected = "line 2, field 'context[0]': 10,000,000 characters, longer than the 131,072 a field may hold"
    assert str(refused.value) == f"{path}: {expected}. Nothing was imported."

    client.force_login(researcher)
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "study", "file": SimpleUploadedFile("big.jsonl", text.encode())},
    )
    assert response.status_code == 200
    assert [str(message) for message in response.context["form"].errors["file"]] == [
        f"{expected}. Nothing was imported."
    ]
    assert Dataset.objects.count() == Context.objects.count() == Response.objects.count() == 0


def test_a_ratings_line_with_a_field_longer_than_a_cell_is_refused_too(researcher, client):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    lines = [json.dumps(SMALL_RATINGS[0]), json.dumps({**SMALL_RATINGS[1], "survey": LONG})]
    with pytest.raises(Exception) as refused:
        parse_ratings("\n".join(lines), "jsonl")
    assert str(refused.value) == f"line 2, field 'survey': {TOO_LONG}"
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:ratings_upload", args=[dataset.pk]),
        {"file": SimpleUploadedFile("r.jsonl", "\n".join(lines).encode()), "scale_min": 1, "scale_max": 5},
    )
    assert response.status_code == 200
    assert Survey.objects.count() == Rating.objects.count() == 0
