"""Issue 40: a writing survey's reference LLM sampled from a judge endpoint (a local stand-in server
speaking the chat-completions protocol): K samples per context stored once, a rerun sends nothing,
tokens and cost counted, and a written reply like the LLM's flagged by the integrity section."""

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import Response
from annotation.quality.integrity_report import survey_integrity
from scoring.models import Judge
from tests.annotation.quality.test_integrity_embeddings import CONTEXT, LLM_FRESH, LLM_SAMPLES, PEOPLE
from tests.factories import load_dataset_records
from tests.scoring.chat_server import Scripted

pytestmark = pytest.mark.django_db


def _survey(researcher, **settings):
    records = [
        {
            "context_id": f"c{i}",
            "context": [CONTEXT],
            "references": ["ref"],
            "responses": [{"system": "bot", "text": "hello"}],
        }
        for i in range(2)
    ]
    dataset = load_dataset_records(records=records, name="moving", owner=researcher)
    return services.survey_launch(
        survey=services.survey_create(
            dataset=dataset,
            name="moving-write",
            owner=researcher,
            task_type="write",
            write_system_name="people",
            contexts_per_hit=2,
            assignments_per_hit=2,
            attention_checks_per_hit=0,
            **settings,
        )
    )


def test_samples_are_stored_once_costed_and_compared_with_the_written_replies(researcher, chat_server):
    chat_server.answer = lambda body, nth: Scripted(reply=LLM_SAMPLES[nth % 2])
    Judge.objects.create(
        owner=researcher,
        name="local",
        base_url=chat_server.base_url,
        model="m",
        price_per_million_prompt_tokens=Decimal("2"),
        price_per_million_completion_tokens=Decimal("6"),
    )
    survey = _survey(researcher)
    out = io.StringIO()
    call_command("sample_reference_llm", "--survey", survey.name, "--judge", "local", "--samples", "2", stdout=out)
    lines = dict(line.split("\t") for line in out.getvalue().splitlines())
    assert lines["systems"] == "local-sample-1,local-sample-2"
    assert (lines["contexts asked"], lines["samples stored"], lines["failed contexts"]) == ("2", "4", "0")
    assert len(chat_server.requests) == 4  # each sample its own request
    # The prompt: the instruction and the conversation so far, nothing else (no system names, no references).
    body = chat_server.requests[0][1]
    assert body["messages"][1]["content"] == f"A: {CONTEXT}" and "Write the next turn" in body["messages"][0]["content"]
    prompt, completion = int(lines["prompt tokens"]), int(lines["completion tokens"])
    assert prompt > 0 and completion > 0
    assert Decimal(lines["cost"]) == pytest.approx((Decimal(prompt) * 2 + Decimal(completion) * 6) / 1_000_000)
    stored = Response.objects.filter(system__name__startswith="local-sample-")
    assert stored.count() == 4 and set(stored.values_list("text", flat=True)) == set(LLM_SAMPLES)
    survey.refresh_from_db()
    assert survey.reference_llm_systems == "local-sample-1,local-sample-2"

    again = io.StringIO()
    call_command("sample_reference_llm", "--survey", survey.name, "--judge", "local", "--samples", "2", stdout=again)
    assert "contexts cached\t2" in again.getvalue() and len(chat_server.requests) == 4  # nothing re-sent

    for worker, text in (("person", PEOPLE[0]), ("asker", LLM_FRESH)):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        items = services.assignment_items(assignment=assignment)
        services.assignment_submit(
            assignment=assignment, answers={item.pk: {"scores": {}, "seconds": "30", "text": text} for item in items}
        )
    flagged = survey_integrity(survey)["flagged_replies"]
    assert {r["worker"] for r in flagged} == {"asker"}
    assert all(f["name"] == "like_reference_llm" for r in flagged for f in r["flags"])


def test_a_failing_endpoint_stores_nothing_and_says_so(researcher, chat_server):
    chat_server.answer = lambda body, nth: Scripted(status=400, reply="secret body")
    Judge.objects.create(owner=researcher, name="bad", base_url=chat_server.base_url, model="m")
    survey = _survey(researcher)
    with pytest.raises(CommandError, match="2 context\\(s\\) failed"):
        call_command("sample_reference_llm", "--survey", survey.name, "--judge", "bad", stdout=io.StringIO())
    assert not Response.objects.filter(system__name__startswith="bad-sample-").exists()


def test_a_rating_survey_is_refused(researcher, chat_server):
    Judge.objects.create(owner=researcher, name="local", base_url=chat_server.base_url, model="m")
    records = [{"context_id": "c0", "context": ["hi"], "responses": [{"system": "bot", "text": "hello"}]}]
    dataset = load_dataset_records(records=records, name="r", owner=researcher)
    services.survey_create(dataset=dataset, name="rating", owner=researcher, contexts_per_hit=1)
    with pytest.raises(CommandError, match="not a writing survey"):
        call_command("sample_reference_llm", "--survey", "rating", "--judge", "local", stdout=io.StringIO())
    assert len(chat_server.requests) == 0
