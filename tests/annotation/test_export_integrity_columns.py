"""Each worker's integrity flags and competence in the ratings export (issue 40): named columns, the same
numbers as MACE, Dawid-Skene and the ordinal spammer model fitted here on the same answers, CSV cells
neutralised, and import ignores them (export -> import stays lossless)."""

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotation import services
from annotation.models import Annotator, Rating
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.ordinal_spammer import ordinal_spammer
from annotation.quality.integrity_export import INTEGRITY_COLUMNS, RATING_INTEGRITY_COLUMNS
from annotation.services.imports import ratings_import
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _study(researcher):
    survey = make_survey(
        researcher, n_contexts=12, name="raters", contexts_per_hit=12, assignments_per_hit=3, attention_checks_per_hit=0
    )
    agreed = {}
    for worker in ("careful-1", "careful-2", "@liner"):  # a worker id a spreadsheet would run as a formula
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        answers = {}
        for item in services.assignment_items(assignment=assignment):
            score = agreed.setdefault(item.response_id, 1 + item.response_id % 5)
            answers[item.pk] = {"scores": {"overall": str(3 if worker == "@liner" else score)}, "seconds": "6"}
        services.assignment_submit(assignment=assignment, answers=answers)
    return survey


def _by_hand(survey):
    """MACE, Dawid-Skene and the ordinal model fitted here, straight on the stored ratings (as the quality
    report feeds them)."""
    triples = [
        (a, r, s)
        for a, r, s in Rating.objects.filter(survey=survey)
        .order_by("pk")
        .values_list("annotator__worker_id", "response_id", "score")
    ]
    labels = [1, 2, 3, 4, 5]
    return (
        mace(triples, labels=labels).competence,
        dawid_skene(triples, labels=labels).competence,
        ordinal_spammer(triples, labels=labels).competence,
    )


def test_the_ratings_export_carries_each_workers_flags_and_competence(researcher):
    survey = _study(researcher)
    out = io.StringIO()
    call_command("export_ratings", dataset=survey.dataset.name, survey=survey.name, real_ids=True, stdout=out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    by_worker = {}
    for record in records:
        by_worker.setdefault(record["worker"], set()).add(
            tuple(json.dumps(record[c]) for c in RATING_INTEGRITY_COLUMNS)
        )
    assert all(len(values) == 1 for values in by_worker.values()), "one value per worker, on every rating"
    cells = {
        worker: dict(zip(RATING_INTEGRITY_COLUMNS, map(json.loads, next(iter(values))), strict=True))
        for worker, values in by_worker.items()
    }
    assert cells["@liner"]["worker_integrity_flags"] == ["near_zero_variance", "straight_lining"]
    assert cells["careful-1"]["worker_integrity_flags"] == []
    by_mace, by_ds, by_ordinal = _by_hand(survey)
    for worker, cell in cells.items():
        assert cell["worker_competence_mace"] == pytest.approx(by_mace[worker], abs=5e-5)
        assert cell["worker_competence_dawid_skene"] == pytest.approx(by_ds[worker], abs=5e-5)
        assert cell["worker_competence_ordinal"] == pytest.approx(by_ordinal[worker], abs=5e-5)
    assert cells["@liner"]["worker_competence_mace"] < cells["careful-1"]["worker_competence_mace"]
    assert cells["@liner"]["worker_competence_ordinal"] < cells["careful-1"]["worker_competence_ordinal"]


def test_the_csv_columns_are_named_neutralised_and_ignored_by_import(researcher):
    survey = _study(researcher)
    out = io.StringIO()
    call_command(
        "export_ratings", dataset=survey.dataset.name, survey=survey.name, real_ids=True, format="csv", stdout=out
    )
    text = out.getvalue()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[-4:] == list(RATING_INTEGRITY_COLUMNS)
    liner = [row for row in rows if row["worker"] == "'@liner"]  # neutralised: a leading quote
    assert liner and {row["worker_integrity_flags"] for row in liner} == {"near_zero_variance;straight_lining"}
    assert not any(row["worker"] == "@liner" for row in rows)
    assert {row["worker_integrity_flags"] for row in rows if row["worker"] == "careful-1"} == {""}
    again = ratings_import(file=text.encode(), dataset=survey.dataset, fmt="csv", survey_name="again")
    assert sorted(Rating.objects.filter(survey=again).values_list("annotator__worker_id", "score")) == sorted(
        Rating.objects.filter(survey=survey).values_list("annotator__worker_id", "score")
    )


def test_the_pairwise_export_carries_the_same_answer_workers_flag_and_its_competence(researcher):
    from annotation.kinds.pairwise import quality as pairwise_quality
    from annotation.kinds.pairwise.imports import pairwise_import
    from tests.annotation.studies_helpers import dataset_records
    from tests.factories import load_dataset_records

    systems = ("s1", "s2", "s3")
    dataset = load_dataset_records(records=dataset_records(6, systems=systems), name="pairs", owner=researcher)
    records = []
    for c in range(6):
        for a, b in (("s1", "s2"), ("s1", "s3"), ("s2", "s3")):
            better = min(a, b, key=lambda s: (systems.index(s) + c) % 3)  # the careful agree on this
            for worker in ("careful-1", "careful-2", "careful-3"):
                records.append(
                    {
                        "context_id": f"c{c:03d}",
                        "system_a": a,
                        "system_b": b,
                        "worker": worker,
                        "winner": "a" if better == a else "b",
                    }
                )
            records.append(
                {"context_id": f"c{c:03d}", "system_a": a, "system_b": b, "worker": "left", "winner": "a"}
            )  # system_a was shown on the left: always the left side
    survey = pairwise_import(
        file="".join(json.dumps(r) + "\n" for r in records).encode(), dataset=dataset, fmt="jsonl", survey_name="pairs"
    )
    out = io.StringIO()
    call_command("export_pairwise", dataset="pairs", real_ids=True, stdout=out)
    cells = {}
    for record in map(json.loads, out.getvalue().splitlines()):
        cells.setdefault(record["worker"], {json.dumps([record[c] for c in INTEGRITY_COLUMNS])})
        assert json.dumps([record[c] for c in INTEGRITY_COLUMNS]) in cells[record["worker"]]
    cells = {w: dict(zip(INTEGRITY_COLUMNS, json.loads(next(iter(v))), strict=True)) for w, v in cells.items()}
    # Imported judgements carry no shown position, so the one-side flag cannot be judged; the same
    # answer on every oriented item is straight-lining.
    assert cells["left"]["worker_integrity_flags"] == ["straight_lining"]
    assert cells["careful-1"]["worker_integrity_flags"] == []
    # MACE fitted here on the judgements as the quality report reads them (oriented items, first/tie/second)
    rows = pairwise_quality.judgement_rows(survey)
    seen, triples = set(), []
    for row in rows:
        if (row["annotator_id"], row["response_id"]) not in seen:
            seen.add((row["annotator_id"], row["response_id"]))
            triples.append((row["annotator_id"], row["response_id"], row["score"]))
    labels = [label for label in pairwise_quality.SCALE if label in {t[2] for t in triples}]
    by_mace = mace(triples, labels=labels).competence
    names = dict(Annotator.objects.values_list("pk", "worker_id"))
    for annotator_id, value in by_mace.items():
        assert cells[names[annotator_id]]["worker_competence_mace"] == pytest.approx(value, abs=5e-5)
    assert cells["left"]["worker_competence_mace"] < cells["careful-1"]["worker_competence_mace"]
