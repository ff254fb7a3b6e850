"""`create_survey --task-type write` and `export_replies`: one record per written reply, with its flags."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import Survey
from tests.annotation.quality.test_integrity_service import PASTED, TYPED, pasted_telemetry, typed_telemetry
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _created(researcher, *extra):
    load_dataset_records(records=dataset_records(2), name="convs", owner=researcher)
    out, err = io.StringIO(), io.StringIO()
    call_command("create_survey", "--dataset", "convs", "--name", "writers", "--task-type", "write",
                 "--contexts-per-hit", "2", "--assignments", "2", *extra, stdout=out, stderr=err)
    return Survey.objects.get(name="writers"), out.getvalue()


def _submit(survey, worker, text, telemetry):
    assignment = services.assignment_claim(survey=survey, worker_id=worker)
    answers = {item.pk: {"scores": {}, "seconds": "9", "text": text, "telemetry": json.dumps(telemetry(text))}
               for item in services.assignment_items(assignment=assignment)}
    services.assignment_submit(assignment=assignment, answers=answers)


def test_create_survey_makes_a_launched_writing_survey_as_the_page_does(researcher):
    survey, out = _created(researcher, "--system-name", " people ")
    assert survey.task_type == "write" and survey.write_system_name == "people"
    assert survey.status == Survey.Status.LIVE and out.strip().endswith(f"/s/{survey.token}/")
    assert survey.instructions.startswith("You will read short conversations.")
    assert not survey.hits.first().items.exclude(kind="write").exists(), "a writing task holds no checks"


def test_create_survey_refuses_a_writing_survey_without_its_system_name(researcher):
    with pytest.raises(CommandError, match="name of the system"):
        _created(researcher)
    assert not Survey.objects.filter(name="writers").exists()


def test_export_replies_writes_each_reply_with_its_flag_names_and_telemetry_pseudonymised(researcher):
    survey, _ = _created(researcher, "--system-name", "people")
    _submit(survey, "typist", TYPED, typed_telemetry)
    _submit(survey, "paster", "=" + PASTED, pasted_telemetry)
    out = io.StringIO()
    call_command("export_replies", "--survey", "writers", "--owner", researcher.username, stdout=out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 4
    assert {r["worker"] for r in records} == {"A1", "A2"}, "pseudonyms, as every export writes workers"
    by_text = {}
    for record in records:
        by_text.setdefault(record["text"][:5], []).append(record)
    assert [r["integrity_flags"] for r in by_text[TYPED[:5]]] == [[], []]
    assert [r["integrity_flags"] for r in by_text["=" + PASTED[:4]]] == [["mostly_pasted"], ["mostly_pasted"]]
    assert by_text["=" + PASTED[:4]][0]["telemetry"]["pasted_chars"] == len(PASTED) + 1
    assert {r["context_id"] for r in records} == {"c000", "c001"}

    out = io.StringIO()
    call_command("export_replies", "--survey", "writers", "--format", "csv", "--real-ids", stdout=out,
                 stderr=io.StringIO())
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {r["worker"] for r in rows} == {"typist", "paster"}
    pasted = [r for r in rows if r["worker"] == "paster"]
    assert pasted[0]["text"].startswith("'="), "a formula-like cell is neutralised"
    assert pasted[0]["integrity_flags"] == "mostly_pasted"
    assert json.loads(pasted[0]["telemetry"])["paste_events"] == 1


def test_export_replies_refuses_a_survey_that_is_not_a_writing_survey(researcher):
    dataset = load_dataset_records(records=dataset_records(2), name="convs", owner=researcher)
    services.survey_create(dataset=dataset, name="raters", owner=researcher)
    with pytest.raises(CommandError, match="not a writing survey"):
        call_command("export_replies", "--survey", "raters", stdout=io.StringIO())
