"""import_pairwise / export_pairwise: JSONL and CSV, all or nothing with line-level errors, CSV
cells neutralised, and a round trip that gives the same judgements back."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.kinds.pairwise.imports import pairwise_import
from annotation.models import PairwiseJudgement, Survey
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(researcher):
    records = dataset_records(4, systems=("hred", "=cmd", "human"))
    return load_dataset_records(records=records, name="ds", owner=researcher)


def _jsonl(records):
    return "".join(json.dumps(r) + "\n" for r in records).encode()


GOOD = [
    {"context_id": "c000", "system_a": "hred", "system_b": "human", "worker": "w1", "winner": "b"},
    {"context_id": "c001", "system_a": "human", "system_b": "hred", "worker": "w1", "winner": "tie", "seconds": 4},
    {"context_id": "c001", "system_a": "=cmd", "system_b": "hred", "worker": "w2", "winner": "a", "aspect": "fun"},
]


def test_import_stores_every_judgement_as_a_closed_pairwise_survey(dataset, tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(_jsonl(GOOD))
    out = io.StringIO()
    call_command("import_pairwise", str(path), dataset="ds", stdout=out)
    assert "Imported 3 pairwise judgements by 2 annotators" in out.getvalue()
    survey = Survey.objects.get(name="ds-pairwise")
    assert (survey.task_type, survey.provider, survey.status) == ("pairwise", "imported", "closed")
    assert sorted(survey.aspects.values_list("key", flat=True)) == ["fun", "overall"]
    tie = PairwiseJudgement.objects.get(winner="tie")
    assert (tie.response_a.system.name, tie.response_b.system.name, tie.seconds) == ("human", "hred", 4.0)
    assert not tie.position_known


def test_a_bad_line_is_named_with_its_field_and_nothing_is_stored(dataset, tmp_path):
    bad = [
        *GOOD,
        {"context_id": "c009", "system_a": "hred", "system_b": "human", "worker": "w3", "winner": "a"},
        {"context_id": "c000", "system_a": "hred", "system_b": "hred", "worker": "w3", "winner": "a"},
        {"context_id": "c000", "system_a": "hred", "system_b": "human", "worker": "w3", "winner": "left"},
        {"context_id": "c000", "system_a": "human", "system_b": "hred", "worker": "w1", "winner": "a"},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(_jsonl(bad))
    with pytest.raises(CommandError) as error:
        call_command("import_pairwise", str(path), dataset="ds")
    message = str(error.value)
    assert "line 4" in message and "unknown context 'c009'" in message
    assert "line 5" in message and "compared with itself" in message
    assert "line 6" in message and "'left' is not a, b or tie" in message
    assert "line 7" in message and "already compared" in message and "(line 1)" in message
    assert not PairwiseJudgement.objects.exists() and not Survey.objects.exists()


def test_csv_import_and_export_round_trip_with_formula_cells_neutralised(dataset, researcher, tmp_path):
    survey = pairwise_import(file=_jsonl(GOOD), dataset=dataset, fmt="jsonl")
    out = io.StringIO()
    call_command("export_pairwise", dataset="ds", format="csv", stdout=out)
    text = out.getvalue()
    assert "'=cmd" in text and ",=cmd" not in text, "a system name cannot run as a formula"
    header = text.splitlines()[0]
    assert header == (
        "context_id,system_a,system_b,worker,winner,aspect,seconds,survey,confirmed,"
        "worker_integrity_flags,worker_competence_mace,worker_competence_dawid_skene"
    )
    survey.delete()
    again = pairwise_import(file=text.encode(), dataset=dataset, fmt="csv", survey_name="again")
    rows = sorted(
        again.pairwise_judgements.values_list(
            "context__external_id", "response_a__system__name", "response_b__system__name", "winner", "aspect"
        )
    )
    assert rows == [
        ("c000", "hred", "human", "b", "overall"),
        ("c001", "=cmd", "hred", "a", "fun"),
        ("c001", "human", "hred", "tie", "overall"),
    ]


def test_jsonl_export_names_the_survey_and_keeps_the_sides(dataset):
    pairwise_import(file=_jsonl(GOOD[:1]), dataset=dataset, fmt="jsonl", survey_name="mine")
    out = io.StringIO()
    call_command("export_pairwise", dataset="ds", real_ids=True, stdout=out)
    assert json.loads(out.getvalue()) == {
        **GOOD[0],
        "aspect": "overall",
        "survey": "mine",
        # one judgement: no flag, and too few shared answers for a competence
        "worker_integrity_flags": [],
        "worker_competence_mace": None,
        "worker_competence_dawid_skene": None,
    }


def test_export_writes_workers_as_dataset_pseudonyms_unless_real_ids_are_asked_for(dataset):
    pairwise_import(file=_jsonl(GOOD), dataset=dataset, fmt="jsonl", survey_name="mine")
    real_workers = {row["worker"] for row in GOOD}
    for fmt in ("jsonl", "csv"):
        out = io.StringIO()
        call_command("export_pairwise", dataset="ds", format=fmt, stdout=out)
        assert not any(worker in out.getvalue() for worker in real_workers), fmt
    out = io.StringIO()
    call_command("export_pairwise", dataset="ds", stdout=out)
    pseudonyms = [json.loads(line)["worker"] for line in out.getvalue().splitlines()]
    assert set(pseudonyms) <= {f"A{n}" for n in range(1, len(real_workers) + 1)}
    first_real = {row["context_id"] + row["system_a"]: row["worker"] for row in GOOD}
    by_pseudonym = {}
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        by_pseudonym.setdefault(record["worker"], set()).add(first_real.get(record["context_id"] + record["system_a"]))
    assert all(len(workers) == 1 for workers in by_pseudonym.values()), "one pseudonym stands for one worker"


def test_the_dataset_page_counts_a_pairwise_surveys_judgements(dataset, researcher, client):
    # The surveys table said "0" ratings for a pairwise survey: its answers are judgements.
    pairwise_import(file=io.BytesIO(_jsonl(GOOD)), dataset=dataset, owner=researcher, fmt="jsonl")
    client.force_login(researcher)
    html = client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    row = html.split("ds-pairwise</a>", 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-label="Ratings or judgements">3 judgements</td>' in row
