"""The `reject` attention policy at submit time, on platforms where nothing can be rejected yet.

A participant who fails a check is marked rejected in RateLab as the submission commits. On a link
platform and on Prolific the work is not confirmed by the platform at that moment (the platform's
list, or a sync, confirms it later), so no rejection can be sent there: the submission must be
stored and the participant shown the thank-you page, not an error raised after the commit.
"""

import pytest
from django.test import Client

from annotation.crowd.link_platform import platform_settings
from annotation.models import Assignment, AttentionAnswer, Rating, Survey
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import entry, make_prolific_survey, pid, publish, session
from tests.annotation.test_link_platform import COMPLETE, start

# Real commits, so that on-commit callbacks run inside the request as they do in production.
pytestmark = pytest.mark.django_db(transaction=True)


def fail_the_check(client, started):
    """Answer the task with 5 everywhere (the instructed check asks for 2) and submit it."""
    token = started["Location"].rstrip("/").split("/")[-1]
    slot = Assignment.objects.get(token=token)
    return client.post(started["Location"], {f"score-{item.pk}-overall": "5" for item in slot.hit.items.all()})


def test_a_link_participant_failing_a_check_under_the_reject_policy_gets_the_thank_you_page(researcher):
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(
        provider=Survey.Provider.LINK, attention_policy=Survey.AttentionPolicy.REJECT
    )
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    client = Client(raise_request_exception=False)
    submitted = fail_the_check(client, start(client, survey, "W1"))
    assert submitted.status_code == 302, submitted.content[:300]
    slot = Assignment.objects.get(annotator__worker_id="W1")
    assert slot.status == Assignment.Status.REJECTED
    assert Rating.objects.filter(assignment=slot).count() == 2
    assert AttentionAnswer.objects.filter(assignment=slot, passed=False).count() == 1


def test_a_prolific_participant_failing_a_check_under_the_reject_policy_gets_the_thank_you_page(researcher, api):
    survey = make_prolific_survey(researcher)
    Survey.objects.filter(pk=survey.pk).update(attention_policy=Survey.AttentionPolicy.REJECT)
    survey.refresh_from_db()
    publish(api, survey)
    transition = api.post(f"submissions/{session(1)}/transition/")
    client = Client(raise_request_exception=False)
    submitted = fail_the_check(client, entry(client, survey, participant=pid(1), session_id=session(1)))
    assert submitted.status_code == 302, submitted.content[:300]
    slot = Assignment.objects.get(annotator__worker_id=pid(1))
    assert slot.status == Assignment.Status.REJECTED
    assert Rating.objects.filter(assignment=slot).count() == 2
    # Prolific is told nothing now: the FAILED_ATTENTION_CHECK code sends the submission to review.
    assert transition.call_count == 0
