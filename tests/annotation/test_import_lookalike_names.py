"""Context ids and system names that would look the same as another on every page are refused.

A JSONL file keeps its text as written, so "c1" and "c1 " (or "hred" and "hred ") were two
contexts (two systems) that every page, export and report shows alike, and a zero-width space or a
right-to-left override made an id look like another, or like nothing it is. CSV cells were already
trimmed; the id and the system name now hold no surrounding white space and no invisible or
direction-changing character in either format, nor does a worker id in imported ratings or pairwise
judgements. Texts (turns, references, responses) keep them.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing import DataImportError, parse_dataset, parse_ratings
from annotation.kinds.pairwise.parsing import parse_pairwise
from annotation.models import Context, Dataset, Response


def line(context_id="c1", system="hred", text="fine"):
    return json.dumps({"context_id": context_id, "context": [text], "responses": [{"system": system, "text": text}]})


def problems(content, fmt="jsonl"):
    with pytest.raises(DataImportError) as error:
        parse_dataset(content, fmt)
    return error.value.report_lines()


@pytest.mark.parametrize(
    ("context_id", "shown"),
    [("c1 ", "'c1 '"), (" c1", "' c1'"), ("c1\t", "'c1\\t'")],
)
def test_a_jsonl_context_id_with_surrounding_white_space_is_refused(context_id, shown):
    lines = problems(line("c1") + "\n" + line(context_id))
    assert lines == [
        f"line 2, field 'context_id': {shown} starts or ends with white space, which no page shows; remove it. "
        "Nothing was imported."
    ]


def test_a_jsonl_system_name_with_surrounding_white_space_is_refused():
    lines = problems(line("c1", system="hred ") + "\n" + line("c2"))
    assert lines == [
        "line 1, field 'responses[0].system': 'hred ' starts or ends with white space, which no page shows; "
        "remove it. Nothing was imported."
    ]


@pytest.mark.parametrize("char", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066"])
def test_an_invisible_or_direction_changing_character_in_an_id_or_system_is_refused(char):
    lines = problems(line(f"c{char}1") + "\n" + line("c2", system=f"s{char}x"))
    code = f"U+{ord(char):04X}"
    assert lines == [
        "2 errors in the file. Nothing was imported.",
        f"line 1, field 'context_id': contains the invisible character {code}, which would make it look like "
        "another; remove it",
        f"line 2, field 'responses[0].system': contains the invisible character {code}, which would make it look "
        "like another; remove it",
    ]


def test_a_csv_file_refuses_an_invisible_character_in_its_ids_too():
    content = "context_id,kind,speaker,system,text,meta\nc\u200b1,context,,,hi,\nc\u200b1,response,,s,t,\n"
    assert any(
        message.startswith("row 2, field 'context_id': contains the invisible character U+200B")
        for message in problems(content, "csv")
    )


def test_texts_keep_their_white_space_and_invisible_characters():
    text = " zero\u200bwidth \u202eright-to-left "
    contexts = parse_dataset(line("c1", text=text), "jsonl")
    assert contexts[0].turns[0]["text"] == text
    assert contexts[0].responses[0].text == text


def test_ids_that_differ_only_in_case_are_still_two_contexts():
    contexts = parse_dataset(line("Ctx") + "\n" + line("ctx"), "jsonl")
    assert [context.external_id for context in contexts] == ["Ctx", "ctx"]


def test_the_upload_page_refuses_a_look_alike_id_and_writes_nothing(client, researcher):
    client.force_login(researcher)
    upload = SimpleUploadedFile("study.jsonl", (line("c1") + "\n" + line("c1 ")).encode())
    response = client.post(reverse("annotation:dataset_upload"), {"name": "study", "file": upload})
    assert response.status_code == 200
    assert "starts or ends with white space" in response.content.decode()
    assert not Dataset.objects.exists() and not Context.objects.exists() and not Response.objects.exists()


def rating_line(worker):
    return json.dumps({"context_id": "c1", "system": "hred", "worker": worker, "score": 4})


@pytest.mark.parametrize(
    ("worker", "problem"),
    [
        ("w1 ", "'w1 ' starts or ends with white space"),
        ("w\u200b1", "contains the invisible character U+200B"),
    ],
)
def test_a_rating_worker_id_that_would_look_like_another_is_refused(worker, problem):
    with pytest.raises(DataImportError) as error:
        parse_ratings(rating_line("w1") + "\n" + rating_line(worker), "jsonl")
    (report,) = error.value.report_lines()
    assert report.startswith(f"line 2, field 'worker': {problem}") and "Nothing was imported" in report


def test_a_pairwise_worker_id_that_would_look_like_another_is_refused():
    record = {"context_id": "c1", "system_a": "hred", "system_b": "vhred", "winner": "a"}
    lines = "\n".join(json.dumps({**record, "worker": worker}) for worker in ("w1", "\u202ew1"))
    with pytest.raises(DataImportError) as error:
        parse_pairwise(lines, "jsonl")
    assert "field 'worker': contains the invisible character U+202E" in error.value.report_lines()[0]
