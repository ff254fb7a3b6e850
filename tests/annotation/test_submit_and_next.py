"""'Submit and next task': the submission stores the task and answers with the next one's page.

Every rule of the two-step flow holds: a retried submission stores nothing twice and claims
nothing more, "Submit and stop" leads to the thank-you page, attention checks are scored, and
no claim is made where Start would make none (the survey's cap, no HIT left, a paused survey, a
consent step due again, an ended Prolific session).
"""

import re
import threading

import pytest
from django.db import connection
from django.test import Client

from annotation.crowd.blocks import block_for_owner
from annotation.models import Assignment, AttentionAnswer, HITItem, ProlificSubmission, Rating, Survey
from annotation.services import consent as consent_service
from annotation.services.questionnaire_spec import parse_questions
from tests.annotation.link_helpers import start_task
from tests.annotation.live_annotator import ACTION_RE, CHECK_RE, CSRF_RE, FIELD_RE
from tests.annotation.prolific_helpers import entry, make_prolific_survey, pid, publish, session
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db

PROGRESS_RE = re.compile(r"Task (\d+) of at most (\d+)")


def _form(html, *, then="next", fail_checks=False):
    """The page's answers as its form sends them: checks answered as asked (or wrongly)."""
    checks = dict(CHECK_RE.findall(html))
    data = {"csrfmiddlewaretoken": CSRF_RE.search(html).group(1)}
    for name in set(FIELD_RE.findall(html)):
        asked = checks.get(name.split("-")[1])
        data[name] = ("5" if asked == "1" else "1") if asked and fail_checks else (asked or "3")
    if then:
        data["then"] = then
    return data


def _token(url):
    return url.rstrip("/").rsplit("/", 1)[-1]


def _first_page(client, survey, worker="w1"):
    url = start_task(client, survey, worker)
    return url, client.get(url).content.decode()


def test_the_answer_is_the_next_task_with_the_first_one_stored(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    assert 'id="submit-next"' in html and "Submit and next task" in html and "Submit and stop" in html
    assert PROGRESS_RE.search(html).groups() == ("1", "6")  # 12 contexts, 2 a task

    answer = client.post(url, _form(html))

    assert answer.status_code == 200, answer.content[:300]
    following = answer.content.decode()
    next_url = ACTION_RE.search(following).group(1)
    assert next_url != url and PROGRESS_RE.search(following).group(1) == "2"
    assert 'id="saved-note"' in following and f'data-submitted-key="{_token(url)}"' in following
    first = Assignment.objects.get(token=_token(url))
    second = Assignment.objects.get(token=_token(next_url))
    assert first.status == Assignment.Status.SUBMITTED and second.status == Assignment.Status.ACTIVE
    assert second.annotator_id == first.annotator_id and second.hit_id != first.hit_id
    replies = first.hit.items.filter(kind=HITItem.Kind.RESPONSE).count()
    assert replies and Rating.objects.filter(assignment=first).count() == replies * survey.aspects.count()
    # The address the page posts to is the new task's, and a GET of it shows that same task.
    assert PROGRESS_RE.search(client.get(next_url).content.decode()).group(1) == "2"


def test_a_retried_submission_stores_nothing_twice_and_claims_nothing_more(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    data = _form(html)
    next_url = ACTION_RE.search(client.post(url, data).content.decode()).group(1)
    stored = Rating.objects.count()

    for _ in range(2):  # the answer was lost on the way: the browser sends the same request again
        retry = client.post(url, data)
        assert retry.status_code == 302 and retry["Location"] == next_url, "back to the task the first one led to"

    assert Rating.objects.count() == stored
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2
    assert Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.ACTIVE).count() == 1


def test_a_replay_after_the_next_task_was_submitted_too_claims_nothing(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    data = _form(html)
    following = client.post(url, data).content.decode()
    second_url = ACTION_RE.search(following).group(1)
    done = client.post(second_url, _form(following, then=""))  # "Submit and stop"
    assert done.status_code == 302 and done["Location"].endswith("/done/")

    replay = client.post(url, data)  # Back twice, and the first form sent again

    assert replay.status_code == 302 and replay["Location"] == f"/a/{_token(url)}/done/"
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2
    assert not Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.ACTIVE).exists()


def test_submit_and_stop_leads_to_the_thank_you_page_and_claims_nothing(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)

    answer = client.post(url, _form(html, then=""))

    assert answer.status_code == 302 and answer["Location"] == f"/a/{_token(url)}/done/"
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 1
    done = client.get(answer["Location"]).content.decode()
    assert "Your answers to this task are saved" in done and "Do another task" in done


def test_attention_checks_are_scored_on_the_way_to_the_next_task(researcher):
    survey = make_survey(researcher, contexts_per_hit=3, assignments_per_hit=1, attention_checks_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    assert CHECK_RE.search(html), "the page carries an instructed check"

    answer = client.post(url, _form(html, fail_checks=True))

    assert answer.status_code == 200 and ACTION_RE.search(answer.content.decode())
    first = Assignment.objects.get(token=_token(url))
    assert first.flagged and AttentionAnswer.objects.filter(assignment=first, passed=False).exists()


def test_the_last_task_under_the_cap_offers_plain_submit_and_next_claims_past_no_cap(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1, max_hits_per_annotator=2)
    client = Client()
    url, html = _first_page(client, survey)
    following = client.post(url, _form(html)).content.decode()
    assert PROGRESS_RE.search(following).groups() == ("2", "2")
    assert 'id="submit-next"' not in following and ">Submit</button>" in following

    # A client that sends "next" anyway is led to the thank-you page: the cap is the claim's.
    last = client.post(ACTION_RE.search(following).group(1), _form(following))
    assert last.status_code == 302 and last["Location"].endswith("/done/")
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2
    assert 'id="no-more"' in client.get(last["Location"]).content.decode()


def test_with_no_hit_left_the_thank_you_page_says_so(researcher):
    survey = make_survey(researcher, n_contexts=4, contexts_per_hit=2, assignments_per_hit=1)
    client, other = Client(), Client()
    url, html = _first_page(client, survey)
    start_task(other, survey, "other")  # holds the only other HIT

    answer = client.post(url, _form(html))

    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    assert Rating.objects.filter(assignment__token=_token(url)).exists()
    assert 'id="no-more"' in client.get(answer["Location"]).content.decode()


def test_a_paused_survey_stores_the_task_and_hands_out_no_other(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.PAUSED)

    answer = client.post(url, _form(html))

    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    assert Assignment.objects.get(token=_token(url)).status == Assignment.Status.SUBMITTED
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 1


def test_a_consent_step_due_again_is_not_skipped(client, researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    consent_service.consent_setup_save(
        survey=survey,
        consent_text="We study chatbots.",
        consent_version="1",
        pre_questions=parse_questions("text | job | Your occupation"),
        post_questions=[],
    )
    survey.refresh_from_db()
    consent = client.post(f"/s/{survey.token}/", {"action": "start"})["Location"]
    client.post(consent, {"choice": "accept"})
    page = client.post(f"/c/{survey.token}/questions/pre/", {"q_job": "nurse"})
    url = page["Location"]
    html = client.get(url).content.decode()
    # The researcher changes the consent text's version: it must be accepted again before any claim.
    consent_service.consent_setup_save(
        survey=survey,
        consent_text="We study chatbots, and now also record timing.",
        consent_version="2",
        pre_questions=parse_questions("text | job | Your occupation"),
        post_questions=[],
    )

    answer = client.post(url, _form(html))

    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 1
    assert client.post(f"/s/{survey.token}/", {"action": "start"})["Location"] == consent


def test_an_ended_prolific_session_gets_no_next_task(client, researcher, api):
    survey = make_prolific_survey(researcher, n_hits=3, assignments=1)
    Survey.objects.filter(pk=survey.pk).update(max_hits_per_annotator=3)
    publish(api, survey)
    url = entry(client, survey, participant=pid(1), session_id=session(1))["Location"]
    html = client.get(url).content.decode()
    assert "completion code" in html, "the stop choice says where the code is"
    following = client.post(url, _form(html))
    assert following.status_code == 200, "a running session goes on to its next task"
    ProlificSubmission.objects.filter(session_id=session(1)).update(status="RETURNED")

    html = following.content.decode()
    answer = client.post(ACTION_RE.search(html).group(1), _form(html))

    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2


def test_an_annotator_blocked_meanwhile_gets_no_next_task(researcher):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    first = Assignment.objects.get(token=_token(url))
    block_for_owner(annotator=first.annotator, owner=researcher, reason="careless")

    answer = client.post(url, _form(html))

    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_double_click_sent_at_once_stores_once_and_claims_once(researcher):
    if connection.vendor != "postgresql":
        pytest.skip("two requests at the same instant need PostgreSQL's row locks (DATABASE_URL=postgres://...)")
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    data = _form(html)
    cookies = client.cookies
    start, answers = threading.Barrier(2), []

    def click():
        twin = Client()
        twin.cookies = cookies  # the same browser
        start.wait()
        try:
            answers.append(twin.post(url, data))
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    held = Assignment.objects.filter(hit__survey=survey, annotator__isnull=False)
    assert held.count() == 2 and held.filter(status=Assignment.Status.ACTIVE).count() == 1, "one next task"
    replies = HITItem.objects.filter(hit__assignments__token=_token(url), kind=HITItem.Kind.RESPONSE).count()
    assert Rating.objects.count() == replies * survey.aspects.count(), "stored once"
    following = held.get(status=Assignment.Status.ACTIVE).token
    for answer in answers:  # each shows the next task, or leads to it, or to the thank-you page
        assert (answer.status_code == 200 and f"/a/{following}/" in answer.content.decode()) or (
            answer.status_code == 302 and answer["Location"] in (f"/a/{following}/", f"/a/{_token(url)}/done/")
        ), (answer.status_code, answer.get("Location"))


def test_on_postgresql_the_answers_and_the_next_slot_are_one_commit(researcher):
    if connection.vendor != "postgresql":
        pytest.skip("one transaction for both is PostgreSQL's (SQLite keeps two)")
    from django.test.utils import CaptureQueriesContext

    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)
    with CaptureQueriesContext(connection) as queries:
        answer = client.post(url, _form(html))
    assert answer.status_code == 200 and ACTION_RE.search(answer.content.decode())
    # Inside the test's own transaction every atomic block is a savepoint: the request's outermost
    # block is the one released last, and no savepoint is released between submit and claim at top level.
    sql = [q["sql"] for q in queries.captured_queries]
    outer = next(s for s in sql if s.startswith("SAVEPOINT")).split()[1]
    flip = next(i for i, s in enumerate(sql) if "SET status = 'submitted'" in s or "SET status = %s" in s)
    take = next(i for i, s in enumerate(sql) if s.startswith("WITH t AS"))
    released = [i for i, s in enumerate(sql) if s == f"RELEASE SAVEPOINT {outer}"]
    assert released and flip < take < released[0]  # the flip and the take under one outer block


@pytest.mark.django_db(transaction=True)
def test_a_next_claim_that_fails_on_the_database_leaves_the_answers_stored(researcher, monkeypatch):
    from django.db import connection as conn

    from annotation.views import task_next

    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    client = Client()
    url, html = _first_page(client, survey)

    def broken_claim(**kwargs):
        with conn.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table_here")  # aborts the transaction on PostgreSQL

    monkeypatch.setattr(task_next.services, "assignment_claim", broken_claim)
    answer = client.post(url, _form(html))
    assert answer.status_code == 302 and answer["Location"].endswith("/done/")
    first = Assignment.objects.get(token=_token(url))
    assert first.status == Assignment.Status.SUBMITTED
    assert (
        Rating.objects.filter(assignment=first).count()
        == HITItem.objects.filter(hit=first.hit, kind=HITItem.Kind.RESPONSE).count() * survey.aspects.count()
        > 0
    )
