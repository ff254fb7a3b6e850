"""create_survey --provider prolific, prolific_sync, the beat entry and the system check E003."""

import json
from io import StringIO

import httpx
import pytest
from django.core import checks
from django.core.management import CommandError, call_command

from annotation.models import ProlificStudy, Survey
from config.celery import app as celery_app
from tests.annotation.prolific_helpers import STUDY_ID, pid, session, study_answer, submissions_answer
from tests.factories import load_dataset_records


@pytest.fixture
def dataset(researcher):
    records = [
        {
            "context_id": f"c{i}",
            "context": [f"hello {i}"],
            "references": ["hi"],
            "responses": [{"system": "s", "text": "ok"}],
        }
        for i in range(4)
    ]
    return load_dataset_records(records=records, name="chat", owner=researcher)


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def create(*extra):
    return run("create_survey", "--dataset", "chat", "--name", "on-prolific", "--provider", "prolific", *extra)


def test_create_survey_publishes_on_prolific_and_prints_the_study_url(dataset, api):
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    published = api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json=study_answer(status="ACTIVE"))
    )
    out, err = create("--reward-cents", "200", "--minutes", "12")
    survey = Survey.objects.get(name="on-prolific")
    assert out.strip() == (
        f"https://ratelab.example.org/p/{survey.token}/"
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert STUDY_ID in err and survey.status == Survey.Status.LIVE
    body = json.loads(created.calls.last.request.content)
    assert body["reward"] == 200 and body["estimated_completion_time"] == 12
    assert json.loads(published.calls.last.request.content) == {"action": "PUBLISH"}


def test_create_survey_as_a_draft_sends_nothing_to_prolific(dataset, api):
    created = api.post("studies/")
    out, err = create("--reward-cents", "200", "--minutes", "12", "--draft")
    assert "/p/" in out and "not created yet" in err and created.call_count == 0
    assert ProlificStudy.objects.get().reward_cents == 200


def test_create_survey_refuses_a_reward_under_the_floor_and_writes_nothing(dataset, api):
    with pytest.raises(CommandError, match=r"£1.00 for 20 minutes .* £3.00 an hour"):
        create("--reward-cents", "100", "--minutes", "20")
    assert not Survey.objects.exists()


def test_create_survey_on_a_dollar_server_judges_the_reward_in_dollars(dataset, api, settings):
    settings.PROLIFIC_CURRENCY = "USD"
    # 100 for 10 minutes meets the pound floor (£6.00 an hour) but not the dollar one.
    under = r"\$1.00 for 10 minutes .* \$6.00 an hour, under Prolific's floor of \$8.00"
    with pytest.raises(CommandError, match=under):
        create("--reward-cents", "100", "--minutes", "10")
    assert not Survey.objects.exists()
    create("--reward-cents", "134", "--minutes", "10", "--draft")
    assert ProlificStudy.objects.values_list("reward_cents", "currency").get() == (134, "USD")


def test_prolific_sync_reports_what_it_reconciled_and_a_measured_median_under_the_floor(dataset, api, client):
    api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json=study_answer(status="ACTIVE"))
    )
    create("--reward-cents", "100", "--minutes", "10")
    answer = submissions_answer((session(1), pid(1), "AWAITING REVIEW"), (session(2), pid(2), "APPROVED"))
    for row, seconds in zip(answer["results"], (1500, 1700), strict=True):
        row["time_taken"] = seconds
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=answer))
    out, err = run("prolific_sync", "--survey", "on-prolific")
    assert out.strip() == "listed=2 confirmed=0 unknown=2 median_seconds=1600"
    assert "for 27 minutes (the measured median)" in err and "top-up of £1.70" in err


def test_prolific_sync_names_an_unknown_survey(db):
    with pytest.raises(CommandError, match="No Prolific survey named 'nope'"):
        run("prolific_sync", "--survey", "nope")


def test_beat_polls_live_prolific_surveys():
    entry = celery_app.conf.beat_schedule["prolific-sync-live-surveys"]
    assert entry["task"] == "annotation.tasks_prolific.prolific_sync_live_surveys"
    assert entry["task"] in celery_app.tasks


def check_ids():
    return [m.id for m in checks.run_checks(databases=["default"]) if m.id.startswith("ratelab.")]


def test_check_e003_names_a_missing_token_or_https_address_once_a_prolific_survey_exists(
    dataset, settings, monkeypatch
):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    assert "ratelab.E003" not in check_ids()
    Survey.objects.create(dataset=dataset, name="p", provider=Survey.Provider.PROLIFIC)
    errors = [m for m in checks.run_checks(databases=["default"]) if m.id == "ratelab.E003"]
    assert len(errors) == 1 and "PROLIFIC_API_TOKEN is not set" in errors[0].msg
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "secret-value-never-shown")
    settings.PUBLIC_BASE_URL = "http://ratelab.example.org"
    errors = [m for m in checks.run_checks(databases=["default"]) if m.id == "ratelab.E003"]
    assert "not an https URL" in errors[0].msg and "secret-value-never-shown" not in errors[0].msg
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    assert "ratelab.E003" not in check_ids()
