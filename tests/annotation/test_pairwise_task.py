"""Pairwise (A/B) surveys: pairs laid out per context with recorded sides, claimed and submitted
through the same link as rating tasks, with gold and swapped-repeat checks."""

import collections
import re

import pytest
from django.test import Client

from annotation import services
from annotation.kinds.pairwise.pairing import PairPlanner
from annotation.models import Assignment, AttentionAnswer, HITItem, PairwiseJudgement, Rating
from tests.annotation.link_helpers import started_task
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _pairs(survey, kind=HITItem.Kind.PAIR):
    return list(HITItem.objects.filter(hit__survey=survey, kind=kind).select_related("response", "response_b"))


def test_every_pair_of_systems_is_laid_out_once_per_context_with_sides_balanced(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12)
    pairs = _pairs(survey)
    per_context = collections.Counter(item.context_id for item in pairs)
    assert set(per_context.values()) == {6}, "4 systems give 6 pairs per context"
    unordered = {(item.context_id, frozenset((item.response.system_id, item.response_b.system_id))) for item in pairs}
    assert len(unordered) == len(pairs), "no pair twice for a context"
    left = collections.Counter(item.response.system_id for item in pairs)
    shown = collections.Counter(item.response.system_id for item in pairs) + collections.Counter(
        item.response_b.system_id for item in pairs
    )
    for system, count in shown.items():
        assert abs(left[system] - count / 2) <= 1, "each system as often left as right"


def test_a_budget_spreads_comparisons_evenly_over_system_pairs(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12, pair_budget=2)
    pairs = _pairs(survey)
    assert len(pairs) == 24
    per_pair = collections.Counter(frozenset((i.response.system_id, i.response_b.system_id)) for i in pairs)
    assert len(per_pair) == 6 and max(per_pair.values()) - min(per_pair.values()) <= 1


def test_each_hit_has_a_gold_pair_with_a_broken_side_and_a_swapped_repeat(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=6)
    for hit in survey.hits.all():
        gold = hit.items.get(kind=HITItem.Kind.PAIR_GOLD)
        assert gold.broken_text and (gold.response_id is None) != (gold.response_b_id is None)
        repeat = hit.items.get(kind=HITItem.Kind.PAIR_REPEAT)
        original = repeat.repeat_of
        assert original.hit_id == hit.pk and original.context_id == repeat.context_id
        assert (repeat.response_id, repeat.response_b_id) == (original.response_b_id, original.response_id)


def test_the_planner_alternates_sides_for_a_single_pair():
    planner = PairPlanner(["x", "y"], seed=3)
    sides = [planner.pairs_for(["x", "y"])[0][0] for _ in range(10)]
    assert sides.count("x") == 5


def test_an_annotator_compares_pairs_through_the_link_without_seeing_system_names(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, ask_strength=True, ask_reason=True)
    client = Client()
    assert client.get(f"/s/{survey.token}/").status_code == 200
    assert not Assignment.objects.exclude(status="open").exists(), "a GET claims nothing"
    started = client.post(f"/s/{survey.token}/", {"action": "start", "worker": "w1"})
    page = client.get(started_task(started)).content.decode()
    for name in ("hred", "tfidf", "human", "secret reference"):
        assert name not in page
    assert 'name="strength-' in page and 'name="reason-' in page and 'value="tie"' in page
    assignment = Assignment.objects.get(status="active")
    answers = pairwise_answers(assignment)
    data = {}
    for item_id, answer in answers.items():
        data.update({f"score-{item_id}-{k}": v for k, v in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "3.0"
    first_pair = next(i for i in answers if HITItem.objects.get(pk=i).kind == "pair")
    data[f"strength-{first_pair}"] = "clear"
    data[f"reason-{first_pair}"] = "A answers  the question"
    done = client.post(started_task(started), data)
    assert done.status_code == 302
    judgements = PairwiseJudgement.objects.filter(survey=survey)
    assert judgements.count() == 3 * 6 and not Rating.objects.exists()
    item = HITItem.objects.get(pk=first_pair)
    stored = judgements.get(response_a=item.response, response_b=item.response_b)
    assert (stored.winner, stored.strength, stored.reason, stored.position_known) == (
        "a",
        "clear",
        "A answers the question",
        True,
    )
    assert AttentionAnswer.objects.filter(assignment=assignment, passed=True).count() == 2
    assert Assignment.objects.get(pk=assignment.pk).flagged is False


def test_choosing_the_broken_reply_fails_the_gold_pair_and_an_unmirrored_repeat_is_recorded(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    assignment = services.assignment_claim(survey=survey, worker_id="w2")
    answers = pairwise_answers(assignment)
    gold = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.PAIR_GOLD)
    repeat = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.PAIR_REPEAT)
    answers[gold.pk]["scores"]["overall"] = "b" if gold.response_id else "a"
    answers[repeat.pk]["scores"]["overall"] = "a"  # the original was answered "a": the mirror is "b"
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.flagged and result.checks_failed == 1, "only the gold pair counts against the annotator"
    assert not AttentionAnswer.objects.get(item=repeat).passed


def test_a_tie_is_refused_where_the_survey_allows_none_and_nothing_is_stored(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, allow_tie=False)
    assignment = services.assignment_claim(survey=survey, worker_id="w3")
    answers = pairwise_answers(assignment, choose=lambda item: "tie")
    with pytest.raises(services.SubmissionRefused, match=r"is not a choice here \(choose A or B\)"):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert not PairwiseJudgement.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == "active"
    html = Client().get(f"/s/{survey.token}/").content.decode()
    assert not re.search(r'value="tie"', html)


def test_the_survey_form_creates_a_pairwise_survey_with_a_budget(researcher, researcher_client):
    dataset = load_dataset_records(records=dataset_records(6), name="form-ds", owner=researcher)
    data = {
        "dataset": dataset.pk, "name": "ab", "task_type": "pairwise", "pair_budget": "2", "allow_tie": "on",
        "question": "How appropriate is this response to the conversation?", "instructions": "Compare.",
        "contexts_per_hit": 3, "assignments_per_hit": 2, "attention_checks_per_hit": 2, "overlap_contexts": 0,
        "max_hits_per_annotator": 5, "assignment_minutes": 30, "reward_cents": 10, "attention_policy": "flag",
    }  # fmt: skip
    response = researcher_client.post("/surveys/new/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    survey = dataset.surveys.get(name="ab")
    assert (survey.task_type, survey.pair_budget, survey.allow_tie, survey.ask_strength) == ("pairwise", 2, True, False)
    assert survey.aspects.get().question.startswith("Which reply is the better")
    assert HITItem.objects.filter(hit__survey=survey, kind="pair").count() == 12


def test_the_survey_page_counts_judgements_and_its_export_writes_them(researcher, researcher_client, client, outsider):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    assignment = services.assignment_claim(survey=survey, worker_id="w9")
    services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment))
    page = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert "Judgements" in page and "Export pairwise judgements" in page
    # the annotators table counts the worker's pairwise judgements (not their ratings: none)
    annotators = page.split("<h2>Annotators</h2>")[1]
    assert '<th scope="col" class="num">Judgements</th>' in annotators and "<dt>Judgements collected</dt>" in page
    assert re.search(r">w9</a></td><td class=\"num\">1</td><td class=\"num\">18</td>", annotators)
    # the annotator's own page counts them per assignment too (it once said "Ratings 0")
    mine = researcher_client.get(f"/surveys/{survey.pk}/annotators/{assignment.annotator_id}/").content.decode()
    assert '<th scope="col" class="num">Judgements</th>' in mine and "Judgements included in analysis" in mine
    assert re.search(r"<td>Submitted</td><td class=\"num\">18</td>", mine)
    lines = researcher_client.get(f"/surveys/{survey.pk}/ratings.jsonl").content.decode().splitlines()
    assert len(lines) == 18 and all('"winner": "a"' in line for line in lines)
    rows = researcher_client.get(f"/surveys/{survey.pk}/ratings.csv").content.decode().splitlines()
    assert len(rows) == 1 + 18 and "winner" in rows[0].split(",")
    client.force_login(outsider)
    assert client.get(f"/surveys/{survey.pk}/ratings.jsonl").status_code == 404
    assert client.get(f"/surveys/{survey.pk}/ratings.csv").status_code == 404


def test_a_pairwise_submission_with_pairs_left_out_names_them_as_pairs(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    assignment = services.assignment_claim(survey=survey, worker_id="w4")
    answers = pairwise_answers(assignment)
    first, *_, last = answers
    del answers[first], answers[last]
    with pytest.raises(services.SubmissionRefused) as refused:
        services.assignment_submit(assignment=assignment, answers=answers)
    n = len(answers) + 2
    assert str(refused.value) == f"Please answer every item: pairs 1 and {n} are still unanswered (marked below)."
    assert not PairwiseJudgement.objects.exists()


def test_the_pair_numbers_the_messages_name_are_printed_on_the_page(researcher):
    """The summary's "pairs 1 and 6 are still unanswered" must point at something an annotator can see: a pair
    shows its number as a reply shows "Reply 3:", not only to a screen reader."""
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    client = Client()
    started = client.post(f"/s/{survey.token}/", {"action": "start"})
    page = client.get(started_task(started)).content.decode()
    shown = re.sub(r'<span class="visually-hidden">.*?</span>', "", page)  # what a sighted annotator reads
    n_pairs = page.count('class="pair"')
    visible = [int(n) for n in re.findall(r"<[^>]*>\s*Pair (\d+)\s*</", shown)]
    assert n_pairs > 2 and visible == list(range(1, n_pairs + 1))
    # with ties allowed, "choose A or B" would be wrong: the message asks for an answer
    assert "Please choose reply A or B" not in page and "Please answer every question for pair 1." in page
