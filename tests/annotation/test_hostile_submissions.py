"""Submissions a careless or hostile annotator's client makes: field names and values no page
offers are refused with a message (or ignored), never a server error, and nothing is stored."""

import html
import re
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, HITItem, MTurkDraft, PairwiseJudgement, Rating, Survey, WrittenResponse
from tests.annotation.link_helpers import start_task
from tests.annotation.pairwise_helpers import make_pairwise_survey
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _fields(html, choose):
    """Every answer field of a task page filled: radios with `choose(values)`, textareas with text."""
    data = {}
    for name in set(re.findall(r'name="(score-\d+-[\w-]+)"', html)):
        data[name] = choose(re.findall(rf'name="{name}" value="([^"]+)"', html))
    for name in set(re.findall(r'name="(text-\d+)"', html)):
        data[name] = "a reply"
    return data


def _opened(survey, worker="hostile-1"):
    client = Client()
    url = start_task(client, survey, worker)
    return client, url, client.get(url).content.decode()


def test_an_item_id_too_long_for_a_number_is_ignored_not_a_server_error(researcher):
    survey = make_survey(researcher)
    client, url, page = _opened(survey)
    answers = _fields(page, lambda values: values[0])
    forged = {f"score-{'9' * 5000}-overall": "3", f"seconds-{'7' * 4400}": "1"}
    # Form-encoded, as a browser sends a form (a multipart part's header could not hold the name).
    form = "application/x-www-form-urlencoded"

    # The page a CSRF failure shows reads the posted answers too.
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = client.cookies
    refused = strict.post(url, urlencode({**answers, **forged, "csrfmiddlewaretoken": "x" * 64}), content_type=form)
    assert refused.status_code == 403 and "Your answers are kept" in refused.content.decode()

    submitted = client.post(url, urlencode({**answers, **forged}), content_type=form)
    assert submitted.status_code == 302 and submitted["Location"].endswith("/done/")
    assert Rating.objects.count() == 12, "the real answers are stored, the made-up fields ignored"


def test_a_written_reply_with_line_breaks_is_counted_as_the_page_counted_it(researcher):
    survey = make_survey(researcher, n_contexts=2, contexts_per_hit=2, task_type="write", write_system_name="crowd")
    client, url, page = _opened(survey)
    first, second = re.findall(r'name="(text-\d+)"', page)
    # 2,000 characters as the textarea's maxlength counts them (a line break is one), which the
    # browser sends with CRLF line breaks: 2,019 characters on the wire.
    reply = "\n".join(["x" * 99] * 20)
    assert len(reply) == 1999
    submitted = client.post(url, {first: reply.replace("\n", "\r\n"), second: "fine"})
    assert submitted.status_code == 302
    assert WrittenResponse.objects.get(item_id=first.split("-")[1]).text == reply, "stored with LF line breaks"


def test_a_written_reply_too_long_is_refused_naming_it(researcher):
    survey = make_survey(researcher, n_contexts=2, contexts_per_hit=2, task_type="write", write_system_name="crowd")
    client, url, page = _opened(survey)
    first, second = re.findall(r'name="(text-\d+)"', page)
    refused = client.post(url, {first: "fine", second: "y" * 2001})
    assert refused.status_code == 400
    assert "Reply 2 has 2001 characters: a reply may have at most 2000." in refused.content.decode()
    assert not WrittenResponse.objects.exists()
    assert Assignment.objects.get(token=url.strip("/").rsplit("/", 1)[-1]).status == Assignment.Status.ACTIVE


def test_a_nul_character_in_a_written_reply_is_refused_with_a_message(researcher):
    # PostgreSQL cannot store it in a text column: stored, it was a server error there
    survey = make_survey(researcher, n_contexts=2, contexts_per_hit=2, task_type="write", write_system_name="crowd")
    client, url, page = _opened(survey)
    first, second = re.findall(r'name="(text-\d+)"', page)
    refused = client.post(url, {first: "fine", second: "bad\x00reply"})
    assert refused.status_code == 400
    assert "Reply 2 holds a NUL character, which cannot be stored: remove it." in refused.content.decode()
    assert not WrittenResponse.objects.exists()


def test_a_nul_character_in_a_pairwise_reason_is_refused_with_a_message(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, ask_reason=True)
    client, url, page = _opened(survey)
    answers = _fields(page, lambda values: values[0])
    item = re.search(r'name="reason-(\d+)"', page).group(1)
    refused = client.post(url, {**answers, f"reason-{item}": "A\x00B"})
    assert refused.status_code == 400
    assert f"Pair {_number(page, item)}: the reason holds a NUL character" in _error(refused)
    assert not PairwiseJudgement.objects.exists()


@pytest.mark.parametrize("kind", [HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT])
def test_a_nul_character_in_a_check_pairs_reason_is_refused_as_on_any_pair(researcher, kind):
    # a check pair shows the same reason box as a real pair, so it is held to the same rules (and
    # a tampered value is answered alike, whichever pair carried it)
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, ask_reason=True)
    client, url, page = _opened(survey)
    answers = _fields(page, lambda values: values[0])
    assignment = Assignment.objects.get(status="active")
    check = HITItem.objects.filter(hit=assignment.hit, kind=kind).first()
    assert check is not None and f'name="reason-{check.pk}"' in page
    refused = client.post(url, {**answers, f"reason-{check.pk}": "A\x00B"})
    assert refused.status_code == 400
    assert f"Pair {_number(page, check.pk)}: the reason holds a NUL character" in _error(refused)
    assert not PairwiseJudgement.objects.exists()


def _number(page, item):
    """The number the page shows an item under (its replies and pairs are numbered from 1)."""
    return int(re.search(rf'id="item-{item}" data-number="(\d+)"', page).group(1))


def _error(response):
    """The refusal the task page shows above its items, as the annotator reads it."""
    return html.unescape(re.search(r'<div id="error-summary"[^>]*>(.*?)</div>', response.content.decode()).group(1))


def _named(item, message):
    return re.search(rf"\b{item}\b", message) is not None


def _ids_past_page_numbers(researcher):
    """An earlier study's rows, so the study under test has item ids no page number shares."""
    make_survey(researcher, name="earlier", n_contexts=30, contexts_per_hit=10)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda item: {f"score-{item}-overall": "9"}, "Reply 3: 9 is outside the scale 1-5."),
        (lambda item: {f"score-{item}-overall": "x"}, "Reply 3: 'x' is not a score."),
        (lambda item: {f"score-{item}-bogus": "3"}, "Reply 3: unknown question(s) bogus."),
        (
            lambda item: {f"score-{int(item) + 100000}-overall": "3"},
            "The answers sent name 1 item that this task does not show: reload the page and answer again.",
        ),
    ],
)
def test_a_tampered_answer_is_refused_naming_the_reply_as_the_page_numbers_it_not_by_its_id(
    researcher, tamper, message
):
    _ids_past_page_numbers(researcher)
    client, url, page = _opened(make_survey(researcher))
    item = re.findall(r'id="item-(\d+)" data-number="3"', page)[0]
    assert int(item) > 30
    refused = client.post(url, {**_fields(page, lambda values: values[0]), **tamper(item)})
    assert refused.status_code == 400 and _error(refused) == message
    assert not _named(item, message) and not _named(int(item) + 100000, message)
    assert not Rating.objects.exists()


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda item: {f"score-{item}-overall": "z"}, "Pair {n}: 'z' is not a choice here (choose A, B or tie)."),
        (lambda item: {f"strength-{item}": "huge"}, "Pair {n}: 'huge' is not a strength (slight or clear)."),
        (lambda item: {f"score-{item}-bogus": "a"}, "Pair {n}: unknown question(s) bogus."),
    ],
)
def test_a_tampered_pairwise_answer_is_refused_naming_the_pair_as_the_page_numbers_it(researcher, tamper, message):
    _ids_past_page_numbers(researcher)
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, allow_tie=True, ask_strength=True)
    client, url, page = _opened(survey)
    shown = re.findall(r'id="item-(\d+)"', page)
    # a real pair, whose strength is kept (a check pair's is asked, to look the same, and dropped)
    item = str(HITItem.objects.filter(pk__in=shown, kind=HITItem.Kind.PAIR).order_by("position")[1].pk)
    message = message.format(n=_number(page, item))
    refused = client.post(url, {**_fields(page, lambda values: values[0]), **tamper(item)})
    assert refused.status_code == 400 and _error(refused) == message and not _named(item, message)
    assert not PairwiseJudgement.objects.exists()


def test_an_mturk_draft_is_kept_without_nul_characters(client, researcher):
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, provider="mturk", launch=False)
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
    hit = survey.hits.get()
    hit.external_id = "3HIT" + "0" * 26
    hit.save()
    turk = {"assignmentId": "3ASGN", "hitId": hit.external_id, "workerId": "AWORKERN"}
    client.get(reverse("annotation:mturk_task", args=[survey.token]), turk)
    slot = Assignment.objects.get(external_id="3ASGN")
    draft = reverse("annotation:mturk_draft", args=[survey.token])
    item = slot.hit.items.first().pk
    kept = client.post(draft, {**turk, "assignment_token": slot.token, f"reason-{item}": "x\x00y"})
    assert kept.status_code == 204
    assert MTurkDraft.objects.get(assignment=slot).fields == {f"reason-{item}": "xy"}


@pytest.mark.parametrize("task_type", ["pairwise", "rate"])
def test_check_items_cannot_be_told_apart_by_their_ids_on_the_page(researcher, task_type):
    # The page names every field after its item's id: ids out of page order gave the checks away
    # (a pairwise HIT's swapped repeat had the HIT's highest id, shown in the middle of the page)
    survey = make_survey(
        researcher, n_contexts=6, contexts_per_hit=3, attention_checks_per_hit=2, task_type=task_type, launch=False
    )
    for hit in survey.hits.all():
        ids = list(hit.items.order_by("position").values_list("pk", flat=True))
        assert ids == sorted(ids), hit
    repeats = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.PAIR_REPEAT)
    assert task_type == "rate" or (repeats.exists() and all(r.repeat_of.hit_id == r.hit_id for r in repeats))
