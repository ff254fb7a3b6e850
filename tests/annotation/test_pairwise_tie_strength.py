"""The strength ("How much better?") belongs to a side: with "About the same" (a tie) there is none, so a strength
sent with a tie (chosen for a side, then the tie; or a page without its script) is not stored, and a
page filled again from earlier answers (a refused submission, a restored MTurk draft) does not show
it checked. A strength with a side is kept as before."""

import re

import pytest
from django.test import Client

from annotation.models import Assignment, HITItem, PairwiseJudgement
from annotation.services.mturk_drafts import mturk_draft_answers, mturk_draft_save
from annotation.views.task_page.display import task_context
from annotation.views.task_page.items import items_html
from tests.annotation.link_helpers import started_task
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = pytest.mark.django_db


def _form(answers):
    data = {}
    for item_id, answer in answers.items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "3.0"
    return data


def _start(survey, worker):
    client = Client()
    started = client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker})
    return client, started_task(started), Assignment.objects.get(status="active", annotator__worker_id=worker)


def test_a_strength_sent_with_a_tie_is_not_stored_and_one_sent_with_a_side_is(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, ask_strength=True, ask_reason=True)
    client, url, assignment = _start(survey, "mira")
    pairs = [item.pk for item in HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position")]
    tied, sided = pairs[0], pairs[1]
    answers = pairwise_answers(assignment, choose=lambda item: "tie" if item.pk == tied else "a")
    data = _form(answers)
    data.update({f"strength-{tied}": "clear", f"reason-{tied}": "both fine", f"strength-{sided}": "slight"})
    assert client.post(url, data).status_code == 302
    stored = PairwiseJudgement.objects.filter(survey=survey, aspect="overall")

    def judgement(item_id):
        item = HITItem.objects.get(pk=item_id)
        return stored.get(context=item.context, response_a=item.response, response_b=item.response_b)

    tie = judgement(tied)
    assert (tie.winner, tie.strength, tie.reason) == ("tie", "", "both fine"), "the tie and reason kept, no strength"
    side = judgement(sided)
    assert (side.winner, side.strength) == ("a", "slight")


def test_a_strength_that_is_no_strength_is_still_refused_with_a_tie(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, ask_strength=True)
    client, url, assignment = _start(survey, "jonas")
    pair = HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position").first()
    data = _form(pairwise_answers(assignment, choose=lambda item: "tie"))
    data[f"strength-{pair.pk}"] = "huge"
    page = client.post(url, data).content.decode()
    assert "is not a strength (slight or clear)" in page
    assert not PairwiseJudgement.objects.exists()


def _strength_checked(html, item_id):
    return bool(re.search(rf'name="strength-{item_id}" value="\w+" checked', html))


def test_a_refused_page_shows_no_strength_under_a_tie_but_keeps_it_under_a_side(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, ask_strength=True)
    client, url, assignment = _start(survey, "ana")
    pairs = [item.pk for item in HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position")]
    tied, sided, left_out = pairs[0], pairs[1], pairs[2]
    answers = pairwise_answers(assignment, choose=lambda item: "tie" if item.pk == tied else "b")
    del answers[left_out]
    data = _form(answers)
    data.update({f"strength-{tied}": "clear", f"strength-{sided}": "clear"})
    refused = client.post(url, data)
    page = refused.content.decode()
    assert "still unanswered" in page
    assert not _strength_checked(page, tied), "a strength is not shown checked under a tie"
    assert _strength_checked(page, sided), "a strength under a side is kept for the next try"


def test_a_restored_mturk_draft_shows_no_strength_under_a_tie(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, ask_strength=True)
    _, _, assignment = _start(survey, "kai")
    pair = HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position").first()
    fields = {f"score-{pair.pk}-overall": "tie", f"strength-{pair.pk}": "slight"}
    mturk_draft_save(assignment=assignment, fields=fields)
    context = task_context(survey=survey, assignment=assignment, previous=mturk_draft_answers(assignment=assignment))
    page = items_html(context["blocks"])  # a page with answers to keep is rendered afresh
    assert re.search(rf'name="score-{pair.pk}-overall" value="tie"[^>]* checked', page), "the tie is restored"
    assert not _strength_checked(page, pair.pk), "its strength is not"


def test_a_strength_or_reason_the_survey_never_asks_for_is_not_stored(researcher):
    # the page has no such fields; a hand-made request adding them stores the judgement without them
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    assert not survey.ask_strength and not survey.ask_reason
    client, url, assignment = _start(survey, "tomas")
    pair = HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position").first()
    data = _form(pairwise_answers(assignment, choose=lambda item: "a"))
    data.update({f"strength-{pair.pk}": "clear", f"reason-{pair.pk}": "forged"})
    assert client.post(url, data).status_code == 302
    stored = PairwiseJudgement.objects.filter(survey=survey, aspect="overall")
    assert stored.exists()
    assert set(stored.values_list("strength", "reason")) == {("", "")}
