"""Every problem of a file is reported (up to a cap), from the commands and the upload forms alike,
and pathological files (deep nesting, huge integers, NaN/Infinity) are refused with line and field.
Nothing is written in any of these cases, on SQLite and PostgreSQL."""

import csv
import html
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.importing import MAX_REPORTED, DataImportError, ImportErrors, parse_dataset
from annotation.models import Annotator, Context, Dataset, Rating, Response, Survey
from annotation.services import dataset_import
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS
from tests.factories import load_dataset_records


def context_line(context_id, **extra):
    record = {"context_id": context_id, "context": ["hi"], "responses": [{"system": "s", "text": "t"}], **extra}
    return json.dumps(record)


# Lines 3 and 5 are broken in different ways; 1, 2 and 4 are fine.
BROKEN_ON_3_AND_5 = "\n".join(
    [
        context_line("c1"),
        context_line("c2"),
        '{"context_id": "c3", "context": ["hi"]}',
        context_line("c4"),
        context_line("c1"),
    ]
)
EXPECTED_3_AND_5 = [
    "2 errors in the file. Nothing was imported.",
    "line 3, field 'responses': missing",
    "line 5, field 'context_id': duplicate context id 'c1' (first at line 1)",
]


def command_error(*args):
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=io.StringIO())
    return str(error.value)


def form_errors(response):
    """The messages listed under the file field, unescaped."""
    return [html.unescape(message) for message in response.context["form"].errors["file"]]


def assert_nothing_written():
    assert Dataset.objects.count() == 0
    assert Context.objects.count() == 0
    assert Response.objects.count() == 0


# --- every error, the same words from the command and the forms ------------------------


def test_import_dataset_command_reports_both_broken_lines(tmp_path, db):
    path = tmp_path / "broken.jsonl"
    path.write_text(BROKEN_ON_3_AND_5, encoding="utf-8")
    message = command_error("import_dataset", str(path), "--name", "study")
    assert message.splitlines() == [f"{path}: {EXPECTED_3_AND_5[0]}", *EXPECTED_3_AND_5[1:]]
    assert_nothing_written()


def test_dataset_upload_form_lists_the_same_errors_as_the_command(client, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "study", "file": SimpleUploadedFile("broken.jsonl", BROKEN_ON_3_AND_5.encode())},
    )
    assert response.status_code == 200
    assert form_errors(response) == EXPECTED_3_AND_5
    assert_nothing_written()


@pytest.mark.parametrize(("upload", "said"), [(b"", "The file is empty."), (None, "Choose a file to upload.")])
def test_an_empty_or_missing_upload_says_nothing_was_imported(client, researcher, upload, said):
    client.force_login(researcher)
    data = {"name": "study"}
    if upload is not None:
        data["file"] = SimpleUploadedFile("empty.jsonl", upload)
    response = client.post(reverse("annotation:dataset_upload"), data)
    assert response.status_code == 200
    assert form_errors(response) == [f"{said} Nothing was imported."]
    assert_nothing_written()


def test_a_csv_dataset_reports_every_bad_row_without_follow_on_errors(tmp_path, db):
    text = (
        "context_id,kind,system,text,meta\n"
        "c1,context,,hi,\n"
        "c1,answer,,yes,\n"
        "c2,context,,hi,{oops\n"
        "c3,context,,hi,\n"
        "c3,response,,no system,\n"
    )
    path = tmp_path / "broken.csv"
    path.write_text(text, encoding="utf-8")
    lines = command_error("import_dataset", str(path), "--name", "study").splitlines()
    assert lines[0].endswith("3 errors in the file. Nothing was imported.")
    assert [line.split(":")[0] for line in lines[1:]] == [
        "row 3, field 'kind'",
        "row 4, field 'meta'",
        "row 6, field 'system'",
    ]
    assert_nothing_written()


def test_ratings_report_parse_errors_and_unknown_contexts_together_in_line_order(tmp_path, researcher, client):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    lines = [
        json.dumps(SMALL_RATINGS[0]),
        json.dumps({**SMALL_RATINGS[2], "context_id": "nope"}),
        json.dumps({**SMALL_RATINGS[3], "score": 9}),
    ]
    expected = [
        "2 errors in the file. Nothing was imported.",
        "line 2, field 'context_id': unknown context 'nope' in dataset 'study'",
        "line 3, field 'score': 9 is outside the survey's scale 1-5",
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    message = command_error("import_ratings", str(path), "--dataset", "study")
    assert message.splitlines() == [f"{path}: {expected[0]}", *expected[1:]]

    client.force_login(researcher)
    response = client.post(
        reverse("annotation:ratings_upload", args=[dataset.pk]),
        {"file": SimpleUploadedFile("r.jsonl", "\n".join(lines).encode()), "scale_min": 1, "scale_max": 5},
    )
    assert form_errors(response) == expected
    assert Survey.objects.count() == Rating.objects.count() == Annotator.objects.count() == 0


def test_errors_beyond_the_cap_are_counted_not_listed(tmp_path, db):
    # 120 bad lines: the first 50 by line are listed, the other 70 counted.
    text = "\n".join(f'{{"context_id": "c{i}", "context": []}}' for i in range(120))
    with pytest.raises(ImportErrors) as error:
        dataset_import(file=text.encode(), name="study", fmt="jsonl")
    lines = error.value.report_lines()
    assert lines[0] == "120 errors in the file. Nothing was imported."
    listed = lines[1:-1]
    assert len(listed) == MAX_REPORTED
    assert [line.split(",")[0] for line in listed] == [f"line {n}" for n in range(1, MAX_REPORTED + 1)]
    assert lines[-1] == f"… and {120 - MAX_REPORTED} more errors"
    assert_nothing_written()


def test_one_error_keeps_the_one_line_message(db):
    with pytest.raises(DataImportError) as error:
        dataset_import(file=b'{"context_id": "x", "context": ["hi"], "responses": 3}\n', name="s", fmt="jsonl")
    assert not isinstance(error.value, ImportErrors)
    assert error.value.report_lines() == [
        "line 1, field 'responses': must be a list of responses. Nothing was imported."
    ]


# --- pathological files ----------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INTEGER = "9" * 5000
PATHOLOGICAL_JSONL = {
    "nested_100000_deep": (context_line("c2")[:-1] + f', "topic": {DEEP}}}', "line 2, field 'topic': JSON nested"),
    "nested_200_deep_in_a_response": (
        json.dumps({"context_id": "c2", "context": ["hi"], "responses": [{"system": "s", "text": "t"}]}).replace(
            '"text": "t"', '"text": "t", "x": ' + "[" * 200 + "]" * 200
        ),
        "line 2, field 'responses[0].x': JSON nested deeper than 64 levels",
    ),
    "integer_of_5000_digits": (
        context_line("c2")[:-1] + f', "count": {HUGE_INTEGER}}}',
        "line 2, field 'count': a 5,000-digit number is too long",
    ),
    # an extra key of a line is kept in meta, but the file has no 'meta': the message names the key
    "nan_in_meta": (context_line("c2")[:-1] + ', "score": NaN}', "line 2, field 'score': NaN is not a JSON number"),
    "infinity_in_response_meta": (
        context_line("c2").replace('"text": "t"', '"text": "t", "temperature": -Infinity'),
        "line 2, field 'responses[0].temperature': Infinity is not a JSON number",
    ),
    "float_overflow_in_meta": (context_line("c2")[:-1] + ', "x": 1e999}', "line 2, field 'x': Infinity"),
    "nul_in_a_key": (context_line("c2")[:-1] + ', "a\\u0000b": 1}', "line 2, field 'meta': contains a NUL character"),
    "nan_under_a_very_long_key": (
        context_line("c2")[:-1] + ', "' + "k" * 100 + '": NaN}',
        "line 2, field '" + "k" * 40 + "…': NaN is not a JSON number",
    ),
}


def pathological_file(case):
    line, _ = PATHOLOGICAL_JSONL[case]
    return f"{context_line('c1')}\n{line}\n"


@pytest.mark.parametrize("case", sorted(PATHOLOGICAL_JSONL))
def test_import_dataset_command_refuses_pathological_json_with_line_and_field(tmp_path, db, case):
    path = tmp_path / "evil.jsonl"
    path.write_text(pathological_file(case), encoding="utf-8")
    message = command_error("import_dataset", str(path), "--name", "study")
    assert PATHOLOGICAL_JSONL[case][1] in message
    assert "Nothing was imported" in message
    assert_nothing_written()


@pytest.mark.parametrize("case", sorted(PATHOLOGICAL_JSONL))
def test_dataset_upload_form_refuses_pathological_json_with_line_and_field(client, researcher, case):
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "study", "file": SimpleUploadedFile("evil.jsonl", pathological_file(case).encode())},
    )
    assert response.status_code == 200
    assert PATHOLOGICAL_JSONL[case][1] in form_errors(response)[0]
    assert_nothing_written()


def csv_with_meta(meta):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["context_id", "kind", "system", "text", "meta"])
    writer.writerow(["c1", "context", "", "hi", '{"fine": 1}'])
    writer.writerow(["c2", "context", "", "hi", meta])
    writer.writerow(["c2", "response", "s", "t", ""])
    return out.getvalue()


PATHOLOGICAL_CSV_META = {
    # 100,000 levels do not fit the CSV reader's cell limit; 60,000 do and reach the JSON parser.
    "nested_60000_deep": ("[" * 60_000 + "]" * 60_000, "row 3, field 'meta': JSON nested deeper than 64 levels"),
    "nested_100000_deep": (DEEP, "row 3: a cell is longer than 131,072 characters"),
    "integer_of_5000_digits": (f'{{"n": {HUGE_INTEGER}}}', "row 3, field 'meta': a 5,000-digit number is too long"),
    "nan": ('{"n": NaN}', "row 3, field 'meta': NaN is not a JSON number"),
    "infinity": ('{"n": Infinity}', "row 3, field 'meta': Infinity is not a JSON number"),
}


@pytest.mark.parametrize("case", sorted(PATHOLOGICAL_CSV_META))
def test_csv_meta_column_refuses_the_same_pathological_json(tmp_path, client, researcher, case):
    meta, expected = PATHOLOGICAL_CSV_META[case]
    path = tmp_path / "evil.csv"
    path.write_text(csv_with_meta(meta), encoding="utf-8")
    assert expected in command_error("import_dataset", str(path), "--name", "study")
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "study", "file": SimpleUploadedFile("evil.csv", csv_with_meta(meta).encode())},
    )
    assert expected in form_errors(response)[0]
    assert_nothing_written()


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        ("NaN", "line 1, field 'score': must be a whole number, not NaN"),
        ("Infinity", "line 1, field 'score': must be a whole number, not Infinity"),
        (HUGE_INTEGER, "line 1, field 'score': must be a whole number, not a 5,000-digit number"),
    ],
)
def test_import_ratings_refuses_pathological_scores(tmp_path, researcher, score, expected):
    load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    path = tmp_path / "r.jsonl"
    path.write_text(f'{{"context_id": "c1", "system": "hred", "worker": "w1", "score": {score}}}\n', encoding="utf-8")
    assert expected in command_error("import_ratings", str(path), "--dataset", "study")
    assert Rating.objects.count() == 0


def test_the_parser_names_the_top_level_key_of_a_line_too_deep_to_parse():
    text = '{"context_id": "c1", "note": "a [ in a string", "deep": ' + DEEP + "}"
    with pytest.raises(DataImportError) as error:
        parse_dataset(text, "jsonl")
    assert str(error.value) == "line 1, field 'deep': JSON nested deeper than 64 levels"


@pytest.mark.parametrize("command", ["import_ratings", "import_pairwise"])
def test_an_integer_too_large_for_a_float_in_seconds_is_refused_by_line_and_field(tmp_path, researcher, command):
    load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    path = tmp_path / "r.jsonl"
    fields = (
        '"system": "hred", "score": 3'
        if command == "import_ratings"
        else '"system_a": "hred", "system_b": "vhred", "winner": "a"'
    )
    path.write_text(f'{{"context_id": "c1", {fields}, "worker": "w1", "seconds": {"9" * 400}}}\n', encoding="utf-8")
    assert "line 1, field 'seconds'" in command_error(command, str(path), "--dataset", "study")
    assert Rating.objects.count() == 0 and not Survey.objects.filter(dataset__name="study").exists()
