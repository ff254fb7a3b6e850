"""A pairwise attention check is not told apart by the shape of its block: a gold pair is shown
among filler pairs under a borrowed conversation, in a block as large as a real one; a swapped
repeat is shown in its conversation's block again, every pair swapped and the others fillers.
Filler answers are required and checked like any answer, never stored, so no figure moves with
them, and a tampered one is refused whole."""

import io
import itertools
import re

import pytest
from django.db import transaction

from analysis.sections.pairwise import pairwise_section
from annotation import services
from annotation.kinds.pairwise.exporting import pairwise_export
from annotation.models import Assignment, AttentionAnswer, HITItem, PairwiseJudgement
from annotation.quality.services import quality_recompute
from annotation.views.task_page.items import hit_blocks
from tests.annotation.check_block_helpers import BlockSkeletons, task_page
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = pytest.mark.django_db

CHECKS = (HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT)


def _hit_blocks(survey, hit):
    """`[(context id, [items])]` of one HIT, grouped as its page groups them."""
    items = list(hit.items.select_related("context", "response", "response_b").order_by("position"))
    by_id = {item.pk: item for item in items}
    blocks = hit_blocks(survey=survey, items=items)
    grouped = [[by_id[int(shown["id"])] for shown in block["items"]] for block in blocks]
    return [(members[0].context_id, members) for members in grouped]


def _assert_checks_are_shaped_as_real_blocks(survey):
    for hit in survey.hits.all():
        blocks = _hit_blocks(survey, hit)
        kinds = [item.kind for _, members in blocks for item in members]
        assert kinds.count(HITItem.Kind.PAIR_GOLD) + kinds.count(HITItem.Kind.PAIR_REPEAT) == 2
        real_sizes = {len(members) for _, members in blocks if members[0].kind == HITItem.Kind.PAIR}
        assert {len(members) for _, members in blocks} == real_sizes == {6}, f"HIT {hit.position}: sizes differ"
        for n, (context_id, members) in enumerate(blocks):
            assert len({item.context_id for item in members}) == 1
            if any(item.kind == HITItem.Kind.PAIR_GOLD for item in members):
                assert context_id not in [c for c, _ in blocks[:n] + blocks[n + 1 :]], "gold under a shown conversation"
                assert {item.kind for item in members} == {HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_FILLER}


def test_every_pairwise_hit_shows_its_checks_in_blocks_as_large_as_its_real_ones(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12)
    _assert_checks_are_shaped_as_real_blocks(survey)


def test_four_checks_a_hit_keep_the_shape_and_borrow_no_conversation_twice(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=24, contexts_per_hit=4, attention_checks_per_hit=4)
    for hit in survey.hits.all():
        blocks = _hit_blocks(survey, hit)
        assert {len(members) for _, members in blocks} == {6}
        golds = [c for c, members in blocks if any(i.kind == HITItem.Kind.PAIR_GOLD for i in members)]
        assert len(golds) == len(set(golds)) == 2
        assert hit.items.filter(kind=HITItem.Kind.PAIR_REPEAT).count() == 2
        contexts = [c for c, _ in blocks]
        assert all(a != b for a, b in itertools.pairwise(contexts)), "two blocks of one conversation would merge"


def test_a_gold_pair_is_a_reply_of_its_borrowed_conversation_among_that_conversations_pairs(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=30)
    places = []
    for hit in survey.hits.all():
        gold = hit.items.select_related("response", "response_b").get(kind=HITItem.Kind.PAIR_GOLD)
        real = gold.response or gold.response_b
        assert real.context_id == gold.context_id
        on_hit = set(hit.items.filter(kind=HITItem.Kind.PAIR).values_list("context_id", flat=True))
        assert gold.context_id not in on_hit
        block = list(hit.items.filter(context_id=gold.context_id).select_related("response", "response_b"))
        fillers = [item for item in block if item.kind == HITItem.Kind.PAIR_FILLER]
        assert len(fillers) == 5
        for filler in fillers:
            assert filler.response.context_id == filler.response_b.context_id == gold.context_id
            assert filler.response.system_id != filler.response_b.system_id
        positions = sorted(item.position for item in block)
        assert positions == list(range(positions[0], positions[0] + 6))
        places.append(gold.position - positions[0])
    assert len(places) == 10 and len(set(places)) > 2, "the gold pair's place in its block is drawn"


def test_a_repeat_is_shown_among_its_conversations_other_pairs_all_swapped(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12)
    for hit in survey.hits.all():
        repeat = hit.items.get(kind=HITItem.Kind.PAIR_REPEAT)
        block = [i for c, members in _hit_blocks(survey, hit) if c == repeat.context_id for i in members]
        originals = {(i.response_id, i.response_b_id) for i in block if i.kind == HITItem.Kind.PAIR}
        again = {(i.response_b_id, i.response_id) for i in block if i.kind != HITItem.Kind.PAIR}
        assert len(originals) == len(again) == 6 and originals == again
        assert {i.kind for i in block if i.kind != HITItem.Kind.PAIR} == {
            HITItem.Kind.PAIR_REPEAT,
            HITItem.Kind.PAIR_FILLER,
        }
        assert min(i.position for i in block if i.kind == HITItem.Kind.PAIR) < repeat.position


def test_a_hit_holding_every_conversation_puts_its_gold_pair_inside_a_real_block(researcher):
    """No conversation is left to borrow: the gold pair joins a real block of its own context
    rather than sit alone under a conversation shown above."""
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    (hit,) = survey.hits.all()
    blocks = _hit_blocks(survey, hit)
    assert sorted(len(members) for _, members in blocks) == [6, 6, 6, 7]
    (gold_block,) = [m for _, m in blocks if any(i.kind == HITItem.Kind.PAIR_GOLD for i in m)]
    assert {i.kind for i in gold_block} == {HITItem.Kind.PAIR, HITItem.Kind.PAIR_GOLD}


def test_the_page_markup_does_not_say_which_pair_is_a_check_or_a_filler(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12, ask_strength=True, ask_reason=True)
    _client, _url, _assignment, page = task_page(survey)
    items_html = "".join(re.findall(r'<section class="task-block".*?</section>', page, re.S))
    assert not re.search(r"gold|filler|check|attention|repeat|broken", items_html, re.I)
    parsed = BlockSkeletons()
    parsed.feed(page)
    assert len(parsed.blocks) == 5 and all(block == parsed.blocks[0] for block in parsed.blocks)
    shown = [item_id for ids in parsed.ids for item_id in ids]
    assert shown == sorted(shown), "item ids follow the page order"


def _post_data(answers):
    data = {}
    for item_id, answer in answers.items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "3.0"
    return data


TAMPERED = {
    "not a choice": "is not a choice here",
    "a tie where none is allowed": "is not a choice here (choose A or B)",
    "unknown question": "unknown question",
    "not a strength": "is not a strength",
    "left out": "is still unanswered",
}


@pytest.mark.parametrize("tamper", list(TAMPERED))
def test_a_tampered_filler_answer_is_refused_with_a_clear_message_and_nothing_is_stored(researcher, tamper):
    survey = make_pairwise_survey(researcher, n_contexts=12, allow_tie=False, ask_strength=True)
    client, url, assignment, _page = task_page(survey)
    answers = pairwise_answers(assignment)
    data = _post_data(answers)
    filler = next(i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.PAIR_FILLER)
    field = f"score-{filler.pk}-overall"
    if tamper == "not a choice":
        data[field] = "c"
    elif tamper == "a tie where none is allowed":
        data[field] = "tie"
    elif tamper == "unknown question":
        data[f"score-{filler.pk}-made_up"] = "a"
    elif tamper == "not a strength":
        data[f"strength-{filler.pk}"] = "enormous"
    else:
        del data[field]

    refused = client.post(url, data)
    assert refused.status_code == 400 and TAMPERED[tamper] in refused.content.decode()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ACTIVE
    assert not PairwiseJudgement.objects.exists() and not AttentionAnswer.objects.exists()

    assert client.post(url, _post_data(answers)).status_code == 302, "the same answers, untampered, are stored"
    assert PairwiseJudgement.objects.count() == 3 * 6 and AttentionAnswer.objects.count() == 2


def _undated(value):
    """A quality report less the times it was computed at."""
    if isinstance(value, dict):
        return {k: _undated(v) for k, v in value.items() if k not in ("computed_at", "decided_at")}
    if isinstance(value, list):
        return [_undated(v) for v in value]
    return value


def _figures(survey, assignments, filler_choice):
    """What the analyses make of the assignments' answers with every filler pair answered so."""
    with transaction.atomic():
        for assignment in assignments:
            answers = pairwise_answers(
                assignment,
                choose=lambda item: filler_choice if item.kind == HITItem.Kind.PAIR_FILLER else "a",
            )
            services.assignment_submit(assignment=assignment, answers=answers)
        stream = io.StringIO()
        pairwise_export(dataset=survey.dataset, stream=stream, survey=survey, fmt="csv")
        section = pairwise_section(dataset=survey.dataset, n_boot=20, apply_exclusions=False)
        figures = {
            "judgements": sorted(
                PairwiseJudgement.objects.values_list("annotator__worker_id", "response_a", "response_b", "winner")
            ),
            "quality": _undated(quality_recompute(survey=survey).data),
            "ranking": [(row["system"], row["strength"]) for row in section["systems"]],
            "n_judgements": section["n_judgements"],
            "export": stream.getvalue(),
        }
        transaction.set_rollback(True)
    return figures


def test_filler_answers_change_no_judgement_agreement_ranking_or_export(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12, assignments_per_hit=3)
    assignments = [services.assignment_claim(survey=survey, worker_id=f"w{n}") for n in range(3)]
    assert len({a.hit_id for a in assignments}) == 1
    fillers = [i for i in services.assignment_items(assignment=assignments[0]) if i.kind == HITItem.Kind.PAIR_FILLER]
    assert len(fillers) == 10  # five beside the gold pair, five beside the repeat

    with_a, with_b = _figures(survey, assignments, "a"), _figures(survey, assignments, "b")
    assert with_a == with_b
    assert len(with_a["judgements"]) == 3 * 3 * 6 == with_a["n_judgements"]
    checks = {"pair_gold": {"total": 3, "failed": 0}, "pair_repeat": {"total": 3, "failed": 0}}
    assert with_a["quality"]["attention"] == checks, "no attention answer for a filler"
    filler_pairs = {(f.response_id, f.response_b_id) for f in fillers}
    assert not filler_pairs & {(a, b) for _, a, b, _ in with_a["judgements"]}, "no filler pair is stored"


def test_the_estimate_counts_the_filler_pairs_the_page_asks(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=12)
    estimate = services.survey_estimate_for(survey=survey)
    _client, _url, _assignment, page = task_page(survey)
    asked = len(set(re.findall(r'name="(score-\d+-[\w-]+)"', page)))
    assert asked == (3 + 2) * 6 == estimate["items_per_hit"]
