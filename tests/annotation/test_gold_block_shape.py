"""A gold attention check cannot be told from a real block by its shape: its reply is shown among
filler replies in a block as large as a real one, at a random place recorded at layout time. Only
the gold reply is scored; filler answers are required and checked, never stored, so no analysis
figure moves with them; a tampered submission is refused whole."""

import math
import re
from collections import Counter

import pytest
from django.test import Client

from annotation import services
from annotation.models import AttentionAnswer, AttentionCheck, HITItem
from annotation.views.task_page.items import hit_blocks
from tests.annotation.check_block_helpers import (
    TAMPERED,
    BlockSkeletons,
    analysis_figures,
    assert_a_tampered_filler_refuses_the_whole_submission,
    assert_filler_answers_change_no_figure,
    task_page,
)
from tests.annotation.studies_helpers import dataset_records, good_answers, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

# Written in the dataset's own format (a plain first turn, then a named speaker), so that the
# conversation's markup is comparable with a real block's too.
GOLD = [
    {
        "turns": ["is the sky green today?", {"speaker": "B", "text": "what colour do you see?"}],
        "response_text": "Purple elephants compile the weather in Fahrenheit.",
        "accepted_scores": [1, 2],
    }
]


def _gold_block_items(hit):
    """The HIT's gold block (its gold reply and fillers), in page order."""
    items = list(hit.items.order_by("position"))
    return [item for item in items if item.kind in (HITItem.Kind.GOLD, HITItem.Kind.GOLD_FILLER)]


def test_a_gold_block_has_as_many_replies_and_the_same_markup_as_a_real_block(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=1)
    _client, _url, assignment, page = task_page(survey)
    parsed = BlockSkeletons()
    parsed.feed(page)
    gold = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.GOLD)
    (gold_index,) = [i for i, ids in enumerate(parsed.ids) if gold.pk in ids]
    real = [skeleton for i, skeleton in enumerate(parsed.blocks) if i != gold_index]

    assert len(real) == 3 and len(parsed.ids[gold_index]) == 4  # four systems: four replies a block
    assert all(skeleton == parsed.blocks[gold_index] for skeleton in real), "the gold block's markup differs"


def test_a_gold_conversation_without_speaker_names_takes_the_datasets_names(researcher):
    """The survey form takes a check's turns as plain texts: among conversations that all show
    "A:" and "B:", the one without names would be the check."""
    records = dataset_records(12)
    for record in records:
        record["context"] = [{"speaker": "A", "text": record["context"][0]}, record["context"][1]]
    dataset = load_dataset_records(records=records, name="named", owner=researcher)
    plain = [{**GOLD[0], "turns": ["is the sky green today?", "what colour do you see?"]}]
    survey = services.survey_create(
        dataset=dataset,
        name="named",
        owner=researcher,
        contexts_per_hit=3,
        gold_checks=plain,
        attention_checks_per_hit=1,
    )
    survey = services.survey_launch(survey=survey)
    _client, _url, assignment, page = task_page(survey)
    parsed = BlockSkeletons()
    parsed.feed(page)
    gold = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.GOLD)
    (gold_index,) = [i for i, ids in enumerate(parsed.ids) if gold.pk in ids]
    assert all(skeleton == parsed.blocks[gold_index] for skeleton in parsed.blocks)
    assert page.count("<bdi>A</bdi>:") == page.count("<bdi>B</bdi>:") == 4


def test_the_page_source_does_not_say_which_reply_is_the_check(researcher):
    survey = make_survey(researcher, n_contexts=30, gold_checks=GOLD, attention_checks_per_hit=1)
    _client, _url, _assignment, page = task_page(survey)
    items_html = "".join(re.findall(r'<section class="task-block".*?</section>', page, re.S))
    assert not re.search(r"gold|filler|check|attention", items_html, re.I)
    parsed = BlockSkeletons()
    parsed.feed(page)
    shown = [item_id for ids in parsed.ids for item_id in ids]
    assert shown == sorted(shown), "item ids follow the page order: none stands out as made apart"

    # The gold reply is not always at the same place in its block (first, say), on any HIT.
    places = []
    for hit in survey.hits.all():
        block = _gold_block_items(hit)
        assert len(block) == 4 and [i.position for i in block] == list(range(block[0].position, block[0].position + 4))
        places.append(next(n for n, item in enumerate(block) if item.kind == HITItem.Kind.GOLD))
    assert len(places) == 10 and len(set(places)) > 1


def test_fillers_come_from_the_checks_own_context_when_the_dataset_holds_it(researcher):
    record = dataset_records(12)[5]  # the check's conversation is context c005's
    gold = [{"turns": record["context"], "response_text": "Purple elephants.", "accepted_scores": [1]}]
    survey = make_survey(researcher, gold_checks=gold, attention_checks_per_hit=1)
    own = survey.dataset.contexts.get(external_id="c005")
    for hit in survey.hits.all():
        fillers = [item for item in _gold_block_items(hit) if item.kind == HITItem.Kind.GOLD_FILLER]
        on_hit = set(hit.items.filter(kind=HITItem.Kind.RESPONSE).values_list("context_id", flat=True))
        assert len(fillers) == 3
        assert not {item.context_id for item in fillers} & on_hit, "no reply is shown twice on a page"
        if own.pk not in on_hit:
            assert {item.response.context_id for item in fillers} == {own.pk}


def test_a_hit_never_shows_the_same_gold_check_twice(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=3)
    for hit in survey.hits.all():
        kinds = Counter(hit.items.values_list("kind", flat=True))
        assert kinds[HITItem.Kind.GOLD] == 1 and kinds[HITItem.Kind.INSTRUCTED] == 2
        items = list(hit.items.select_related("attention_check", "response", "context").order_by("position"))
        blocks = hit_blocks(survey=survey, items=items)
        assert sorted(len(block["items"]) for block in blocks) == [4, 4, 4, 4, 4, 4]  # instructed blocks too


def _answers(assignment, *, gold_score, filler_score, real_score=None):
    answers = good_answers(assignment)
    aspects = list(assignment.hit.survey.aspects.values_list("key", flat=True))
    for number, item in enumerate(services.assignment_items(assignment=assignment)):
        if item.kind == HITItem.Kind.GOLD:
            answers[item.pk]["scores"] = dict.fromkeys(aspects, gold_score)
        elif item.kind == HITItem.Kind.GOLD_FILLER:
            answers[item.pk]["scores"] = dict.fromkeys(aspects, filler_score)
        elif item.kind == HITItem.Kind.RESPONSE and real_score is not None:
            answers[item.pk]["scores"] = dict.fromkeys(aspects, real_score(number))
    return answers


def test_only_the_gold_reply_is_scored_against_the_accepted_scores(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=1, aspects=["fluency"])
    careful = services.assignment_claim(survey=survey, worker_id="careful")
    fillers = [i for i in services.assignment_items(assignment=careful) if i.kind == HITItem.Kind.GOLD_FILLER]
    assert len(fillers) == 3

    # Fillers rated 5 (outside the accepted 1-2) do not fail a check; the gold reply rated 2 passes.
    result = services.assignment_submit(assignment=careful, answers=_answers(careful, gold_score=2, filler_score=5))
    assert (result.checks_passed, result.checks_failed, result.flagged) == (1, 0, False)
    (answer,) = AttentionAnswer.objects.filter(assignment=careful)
    assert answer.item.kind == HITItem.Kind.GOLD and answer.score == 2 and answer.passed

    # Fillers rated 1 (inside the accepted scores) do not pass a gold reply rated 5.
    careless = services.assignment_claim(survey=survey, worker_id="careless")
    result = services.assignment_submit(assignment=careless, answers=_answers(careless, gold_score=5, filler_score=1))
    assert (result.checks_passed, result.checks_failed, result.flagged) == (0, 1, True)
    assert not AttentionAnswer.objects.get(assignment=careless).passed
    assert AttentionAnswer.objects.count() == 2


def _figures(survey, assignments, filler_score):
    def answers_for(assignment, n):
        real = lambda i: 1 + (i * (n + 2)) % 5  # noqa: E731  (differs between annotators)
        return _answers(assignment, gold_score=1, filler_score=filler_score, real_score=real)

    return analysis_figures(survey, assignments, answers_for)


def test_filler_answers_change_no_analysis_figure(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=1, assignments_per_hit=3)
    assert_filler_answers_change_no_figure(survey, _figures, filler_kind=HITItem.Kind.GOLD_FILLER, check="gold")


@pytest.mark.parametrize("tamper", list(TAMPERED))
def test_a_submission_with_a_tampered_filler_answer_is_refused_whole(researcher, tamper):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=1)
    client, url, assignment, page = task_page(survey)
    filler = next(i for i in _gold_block_items(assignment.hit) if i.kind == HITItem.Kind.GOLD_FILLER)
    gold = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.GOLD)
    answers = {"filler": filler, f"score-{gold.pk}-overall": "1"}
    assert_a_tampered_filler_refuses_the_whole_submission(
        tamper, client=client, url=url, assignment=assignment, page=page, answers=answers
    )


def test_a_gold_item_laid_out_before_fillers_still_shows_alone(researcher):
    """HITs laid out before fillers existed hold lone gold items, even the same check twice in a
    row: each keeps a block of its own, and is scored as before."""
    survey = make_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=1, attention_checks_per_hit=0, launch=False
    )
    check = AttentionCheck.objects.create(survey=survey, turns=["hi"], response_text="Purple.", accepted_scores=[1])
    hit = survey.hits.get()
    last = hit.items.order_by("-position").first().position
    for n in (1, 2):
        HITItem.objects.create(hit=hit, position=last + n, kind=HITItem.Kind.GOLD, attention_check=check)
    survey = services.survey_launch(survey=survey)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    blocks = hit_blocks(survey=survey, items=services.assignment_items(assignment=assignment))
    assert [len(block["items"]) for block in blocks] == [4, 4, 4, 1, 1]
    result = services.assignment_submit(
        assignment=assignment, answers=_answers(assignment, gold_score=1, filler_score=3)
    )
    assert (result.checks_passed, result.checks_failed) == (2, 0)


@pytest.mark.usefixtures("fresh_cache")
def test_the_estimate_counts_a_gold_block_as_the_task_page_asks_it(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=2)
    estimate = services.survey_estimate_for(survey=survey)
    _client, _url, _assignment, page = task_page(survey)
    asked = len(set(re.findall(r'name="(score-\d+-[\w-]+)"', page)))
    assert asked == 3 * 4 + 4 + 4 == estimate["items_per_hit"]  # three contexts, the gold and instructed blocks
    start = Client().get(f"/s/{survey.token}/").content.decode()
    told = int(re.search(r"about <strong>(\d+) minutes?</strong> \(an estimate\)", start).group(1))
    assert told == max(1, math.ceil(estimate["minutes_per_hit"]))
