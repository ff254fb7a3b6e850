"""An instructed attention check cannot be told from a real block by its shape: its instruction is
one of the replies, at a place drawn at layout time, under a real conversation borrowed from a
context off the HIT whose other replies are fillers, and it is asked every question. Only its main
answer is compared; filler answers are required and checked, never stored, so no analysis figure
moves with them; a tampered submission is refused whole. Instructed items laid out before (alone,
no conversation, the main question only) render and score as they did."""

import re

import pytest

from annotation import services
from annotation.models import AttentionAnswer, HITItem, Rating
from annotation.services import SubmissionRefused
from annotation.services.demo_data.simulation import ratings_simulate
from annotation.views.task_page.items import hit_blocks
from tests.annotation.check_block_helpers import (
    TAMPERED,
    BlockSkeletons,
    analysis_figures,
    assert_a_tampered_filler_refuses_the_whole_submission,
    assert_filler_answers_change_no_figure,
    task_page,
)
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

EXTRA = ["fluency", "engaging"]
ASPECTS = ["overall", *EXTRA]


def _instructed_block(hit):
    """The HIT's instruction and its fillers, in page order."""
    kinds = (HITItem.Kind.INSTRUCTED, HITItem.Kind.INSTRUCTED_FILLER)
    return list(hit.items.filter(kind__in=kinds).select_related("response").order_by("position"))


def test_an_instructed_block_has_a_real_blocks_size_markup_and_questions(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=1, aspects=EXTRA)
    _client, _url, assignment, page = task_page(survey)
    parsed = BlockSkeletons()
    parsed.feed(page)
    check = HITItem.objects.get(hit=assignment.hit, kind=HITItem.Kind.INSTRUCTED)
    (index,) = [i for i, ids in enumerate(parsed.ids) if check.pk in ids]
    real = [skeleton for i, skeleton in enumerate(parsed.blocks) if i != index]

    assert len(real) == 3 and len(parsed.ids[index]) == 4  # four systems: four replies a block
    assert all(skeleton == parsed.blocks[index] for skeleton in real), "the instructed block's markup differs"
    text = f"Please choose {check.instructed_score} for every question about this reply."
    assert page.count(text) == 1
    for aspect in ASPECTS:
        assert f'name="score-{check.pk}-{aspect}"' in page

    # Under a real conversation, from a context this HIT does not show, whose replies the fillers are.
    on_hit = set(assignment.hit.items.filter(kind=HITItem.Kind.RESPONSE).values_list("context_id", flat=True))
    block = _instructed_block(assignment.hit)
    assert len({item.context_id for item in block}) == 1 and check.context_id not in on_hit
    assert all(item.response.context_id == check.context_id for item in block if item.response_id)
    assert all(turn["text"] in page for turn in check.context.turns)


def test_the_page_source_does_not_say_which_block_holds_the_instruction(researcher):
    survey = make_survey(researcher, n_contexts=30, attention_checks_per_hit=1)
    _client, _url, _assignment, page = task_page(survey)
    items_html = "".join(re.findall(r'<section class="task-block".*?</section>', page, re.S))
    markup = re.sub(
        r"This is an attention check, not a real reply\. Please choose \d for every question", "", items_html
    )
    assert not re.search(r"gold|filler|instr|check|attention", markup, re.I)
    parsed = BlockSkeletons()
    parsed.feed(page)
    shown = [item_id for ids in parsed.ids for item_id in ids]
    assert shown == sorted(shown), "item ids follow the page order: none stands out as made apart"

    places = []
    for hit in survey.hits.all():
        block = _instructed_block(hit)
        assert len(block) == 4 and [i.position for i in block] == list(range(block[0].position, block[0].position + 4))
        places.append(next(n for n, item in enumerate(block) if item.kind == HITItem.Kind.INSTRUCTED))
    assert len(places) == 10 and len(set(places)) > 1, "the instruction is not always at the same place"


def test_two_checks_on_a_hit_never_borrow_the_same_context(researcher):
    survey = make_survey(researcher, n_contexts=30, attention_checks_per_hit=3)
    for hit in survey.hits.all():
        checks = hit.items.filter(kind=HITItem.Kind.INSTRUCTED)
        assert checks.count() == 3 and len({check.context_id for check in checks}) == 3
        items = list(hit.items.select_related("attention_check", "response", "context").order_by("position"))
        assert sorted(len(block["items"]) for block in hit_blocks(survey=survey, items=items)) == [4] * 6


def _answers(assignment, *, instructed, filler, real=None):
    """Answers with the instruction given `instructed` (a score, or None for what it asks) on every
    question, each filler `filler`, and each real reply `real(number)` when given."""
    answers = good_answers(assignment)
    for number, item in enumerate(services.assignment_items(assignment=assignment)):
        if item.kind == HITItem.Kind.INSTRUCTED:
            score = item.instructed_score if instructed is None else instructed
            answers[item.pk]["scores"] = dict.fromkeys(answers[item.pk]["scores"], score)
        elif item.kind == HITItem.Kind.INSTRUCTED_FILLER:
            answers[item.pk]["scores"] = dict.fromkeys(answers[item.pk]["scores"], filler)
        elif item.kind == HITItem.Kind.RESPONSE and real is not None:
            answers[item.pk]["scores"] = dict.fromkeys(answers[item.pk]["scores"], real(number))
    return answers


def test_only_the_instructions_main_answer_decides_and_every_question_is_required(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=1, aspects=EXTRA)
    careful = services.assignment_claim(survey=survey, worker_id="careful")
    check = next(i for i in services.assignment_items(assignment=careful) if i.kind == HITItem.Kind.INSTRUCTED)
    wrong = 3  # never asked for (INSTRUCTED_SCORES)

    # The instruction's main question alone is not enough: every question of its block is asked.
    answers = _answers(careful, instructed=None, filler=wrong)
    answers[check.pk]["scores"] = {"overall": check.instructed_score}
    with pytest.raises(SubmissionRefused) as refused:
        services.assignment_submit(assignment=careful, answers=answers)
    assert refused.value.missing == (check.pk,) and not AttentionAnswer.objects.exists()

    # Fillers given the asked number or not, what counts is the instruction's main answer.
    result = services.assignment_submit(assignment=careful, answers=_answers(careful, instructed=None, filler=wrong))
    assert (result.checks_passed, result.checks_failed, result.flagged) == (1, 0, False)
    (answer,) = AttentionAnswer.objects.filter(assignment=careful)
    assert answer.item_id == check.pk and answer.score == check.instructed_score and answer.passed

    careless = services.assignment_claim(survey=survey, worker_id="careless")
    asked = next(i for i in services.assignment_items(assignment=careless) if i.kind == HITItem.Kind.INSTRUCTED)
    answers = _answers(careless, instructed=wrong, filler=asked.instructed_score)
    result = services.assignment_submit(assignment=careless, answers=answers)
    assert (result.checks_passed, result.checks_failed, result.flagged) == (0, 1, True)
    assert not AttentionAnswer.objects.get(assignment=careless).passed


def _figures(survey, assignments, filler):
    def answers_for(assignment, n):
        real = lambda i: 1 + (i * (n + 2)) % 5  # noqa: E731  (differs between annotators)
        return _answers(assignment, instructed=None, filler=filler, real=real)

    return analysis_figures(survey, assignments, answers_for)


def test_filler_answers_change_no_analysis_figure(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=1, assignments_per_hit=3)
    assert_filler_answers_change_no_figure(
        survey, _figures, filler_kind=HITItem.Kind.INSTRUCTED_FILLER, check="instructed"
    )


@pytest.mark.parametrize("tamper", list(TAMPERED))
def test_a_submission_with_a_tampered_filler_answer_is_refused_whole(researcher, tamper):
    survey = make_survey(researcher, attention_checks_per_hit=1)
    client, url, assignment, page = task_page(survey)
    block = _instructed_block(assignment.hit)
    check = next(i for i in block if i.kind == HITItem.Kind.INSTRUCTED)
    filler = next(i for i in block if i.kind == HITItem.Kind.INSTRUCTED_FILLER)
    answers = {"filler": filler, f"score-{check.pk}-overall": str(check.instructed_score)}
    assert_a_tampered_filler_refuses_the_whole_submission(
        tamper, client=client, url=url, assignment=assignment, page=page, answers=answers
    )


def test_an_instructed_item_laid_out_before_fillers_still_shows_alone(researcher):
    """A HIT laid out before the change holds a lone instruction (no context): it keeps a block of
    its own without a conversation, the old wording and the main question only, scored as before."""
    survey = make_survey(researcher, n_contexts=3, attention_checks_per_hit=0, aspects=EXTRA, launch=False)
    hit = survey.hits.get()
    last = hit.items.order_by("-position").first().position
    old = HITItem.objects.create(hit=hit, position=last + 1, kind=HITItem.Kind.INSTRUCTED, instructed_score=4)
    survey = services.survey_launch(survey=survey)
    _client, _url, assignment, page = task_page(survey)
    blocks = hit_blocks(survey=survey, items=services.assignment_items(assignment=assignment))
    assert [len(block["items"]) for block in blocks] == [4, 4, 4, 1] and blocks[-1]["turns"] == []
    (shown,) = blocks[-1]["items"]
    assert shown["text"] == "This is an attention check, not a real reply. Please choose 4 for this item."
    assert [field["key"] for field in shown["fields"]] == ["overall"]
    assert f'name="score-{old.pk}-fluency"' not in page

    answers = good_answers(assignment)
    assert answers[old.pk]["scores"] == {"overall": 4}
    extra = {**answers, old.pk: {"scores": {"overall": 4, "fluency": 4}}}
    with pytest.raises(SubmissionRefused, match="unknown question"):
        services.assignment_submit(assignment=assignment, answers=extra)
    answers[old.pk]["scores"] = {"overall": 5}
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert (result.checks_passed, result.checks_failed) == (0, 1)


def test_careful_simulated_annotators_follow_the_instruction_on_every_question(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=2, assignments_per_hit=2, aspects=EXTRA)
    summary = ratings_simulate(survey=survey, n_annotators=4, seed=3)
    assert summary["assignments"] == 8 and summary["checks_failed"] == 0
    assert AttentionAnswer.objects.filter(passed=True).count() == 16
    assert summary["ratings"] == Rating.objects.count() == 12 * 3 * 4 * 2, "no filler answer is stored"
    careless = ratings_simulate(
        survey=make_survey(researcher, name="s2", dataset_name="d2"), n_annotators=4, seed=3, careless_fraction=1.0
    )
    assert careless["checks_failed"] > 0
