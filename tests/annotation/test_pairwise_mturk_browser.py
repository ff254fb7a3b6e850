"""A pairwise HIT inside (a stand-in for) MTurk's frame, in real headless Chromium: the optional
one-line reason (and every answer) is kept as it is given, restored when the worker reloads MTurk's
page, stored with the judgement, and the kept copy is dropped once the assignment is handed back.

Inside the frame our page is a third-party document: this Chromium (like any browser blocking
third-party cookies) refuses it localStorage, so the frame's script keeps the answers on the server
(MTurkDraft). Loaded as a top-level page, task.js keeps them in localStorage, and the "answers
saved" page clears that copy. MTurk's site is Playwright request routing, as in test_mturk_browser.py.
"""

import time

import pytest
from django.urls import reverse

from annotation.models import Assignment, HITItem, MTurkDraft, PairwiseJudgement, Survey
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.test_mturk_browser import APP, SANDBOX, open_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
KEPT = "ratelab-task:"
REASON = "A answers the question"


def _kept_keys(frame):
    return frame.evaluate(f"Object.keys(localStorage).filter(k => k.indexOf({KEPT!r}) === 0)")


def _live_pairwise_hit(researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=2, contexts_per_hit=2, provider="mturk", launch=False, ask_reason=True
    )
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)  # published elsewhere (boto3 tests)
    hit = survey.hits.get()
    hit.external_id = "3HIT" + "0" * 26
    hit.save()
    return survey, hit


def _draft_reason(page, slot, item_id, wait=5.0):
    """The reason the server keeps for `item_id` once the frame's script has sent it (it waits for
    a pause). Waits with Playwright, whose loop also serves the routed requests, not time.sleep."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        draft = MTurkDraft.objects.filter(assignment=slot).first()
        if draft and draft.fields.get(f"reason-{item_id}"):
            return draft.fields[f"reason-{item_id}"]
        page.wait_for_timeout(100)
    return None


def _answer_all(frame, answers):
    for item_id, answer in answers.items():
        for aspect, value in answer["scores"].items():
            frame.locator(f'input[name="score-{item_id}-{aspect}"][value="{value}"]').check()


def _first_pair(answers):
    return next(pk for pk in answers if HITItem.objects.get(pk=pk).kind == HITItem.Kind.PAIR)


def test_the_mturk_frame_keeps_the_reason_across_a_reload_and_drops_it_on_submit(
    browser,
    live_server,
    researcher,
):
    survey, hit = _live_pairwise_hit(researcher)
    task_path = reverse("annotation:mturk_task", args=[survey.token])
    query = f"assignmentId=3ASGPAIR&hitId={hit.external_id}&workerId=AWORKERP&turkSubmitTo={SANDBOX}"
    handed_back = []
    page = open_page(browser, live_server)
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)

    def mturk_site(route):
        if route.request.url.endswith("/mturk/externalSubmit"):
            handed_back.append(route.request.post_data)
            route.fulfill(status=200, content_type="text/html", body='<p id="done">HIT submitted</p>')
        else:
            body = f'<iframe id="task" src="{APP}{task_path}?{query}"></iframe>'
            route.fulfill(status=200, content_type="text/html", body=body)

    page.route(f"{SANDBOX}/**", mturk_site)
    page.goto(f"{SANDBOX}/projects/GROUP/tasks")
    frame = page.frame_locator("#task")
    frame.locator("fieldset").first.wait_for()
    slot = Assignment.objects.get(external_id="3ASGPAIR")
    answers = pairwise_answers(slot, choose=lambda item: "a")
    first_pair = _first_pair(answers)
    frame.locator(f"#reason-{first_pair}").fill(REASON)
    frame.locator(f'input[name="score-{first_pair}-overall"][value="a"]').check()
    assert _draft_reason(page, slot, first_pair) == REASON

    page.reload()  # the worker reloads MTurk's page: the frame loads the task again
    frame = page.frame_locator("#task")
    frame.locator("fieldset").first.wait_for()
    assert frame.locator(f"#reason-{first_pair}").input_value() == REASON
    assert frame.locator(f'input[name="score-{first_pair}-overall"][value="a"]').is_checked()
    assert frame.locator("#restored-note").is_visible()

    _answer_all(frame, answers)
    frame.get_by_role("button", name="Submit").click()
    frame.locator("#done").wait_for()

    assert handed_back and "assignmentId=3ASGPAIR" in handed_back[0]
    item = HITItem.objects.get(pk=first_pair)
    judgement = PairwiseJudgement.objects.get(assignment=slot, response_a=item.response, response_b=item.response_b)
    assert judgement.reason == REASON
    assert not MTurkDraft.objects.filter(assignment=slot).exists(), "the draft goes once the answers are stored"
    assert not [text for text in console if "Content Security Policy" in text], console


def test_where_the_browser_allows_storage_the_answers_saved_page_clears_the_kept_copy(
    browser,
    live_server,
    researcher,
):
    survey, hit = _live_pairwise_hit(researcher)
    task = f"{APP}{reverse('annotation:mturk_task', args=[survey.token])}"
    page = open_page(browser, live_server)
    page.route(
        f"{SANDBOX}/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body='<p id="done">HIT submitted</p>'),
    )
    page.goto(f"{task}?assignmentId=3ASGTOP&hitId={hit.external_id}&workerId=AWORKERT&turkSubmitTo={SANDBOX}")
    slot = Assignment.objects.get(external_id="3ASGTOP")
    answers = pairwise_answers(slot, choose=lambda item: "b")
    page.fill(f"#reason-{_first_pair(answers)}", REASON)
    assert _kept_keys(page.main_frame) == [KEPT + slot.token]
    _answer_all(page.main_frame, answers)
    page.click("#submit-hit")
    page.locator("#done").wait_for()
    page.goto(f"{task}?assignmentId=3ASGPROBE&hitId=none&workerId=AWORKERT")  # any page of ours
    assert _kept_keys(page.main_frame) == []
