"""ACUTE-Eval's repeated pairs (issue 37): one of a task's pairs shown again later, sides swapped,
to measure each annotator's self-consistency; stored as checks, reported in the Conversations section."""

import pytest

from analysis.services.build import report_build
from annotation import services
from annotation.models import AttentionAnswer, ConversationJudgement, HITItem
from tests.annotation.conversation_study_helpers import acute_answers, claimed, make_conversation_survey

pytestmark = pytest.mark.django_db


def _survey(owner, **settings):
    settings.setdefault("contexts_per_hit", 3)
    return make_conversation_survey(owner, name="acute-rep", task_type="acute", attention_checks_per_hit=2,
                                    **settings)  # fmt: skip


def test_every_task_repeats_one_of_its_pairs_later_with_sides_swapped(researcher):
    survey = _survey(researcher)
    for hit in survey.hits.all():
        items = list(hit.items.order_by("position"))
        repeats = [i for i in items if i.kind == HITItem.Kind.CONV_PAIR_REPEAT]
        assert len(repeats) == 1 and sum(i.kind == HITItem.Kind.CONV_PAIR_GOLD for i in items) == 1
        [repeat] = repeats
        original = repeat.repeat_of
        assert original.hit_id == hit.pk and original.kind == HITItem.Kind.CONV_PAIR
        assert (repeat.conversation_id, repeat.conversation_b_id) == (
            original.conversation_b_id,
            original.conversation_id,
        )
        assert repeat.position >= original.position + 2  # later, never right after it


def _answers(assignment, *, consistent):
    answers = acute_answers(assignment, choose="a")
    for item in services.assignment_items(assignment=assignment):
        if item.kind == HITItem.Kind.CONV_PAIR_REPEAT:
            side = "b" if consistent else "a"  # the first answer was "a": mirrored is "b"
            answers[item.pk]["scores"] = dict.fromkeys(answers[item.pk]["scores"], side)
    return answers


def test_a_repeat_is_a_check_not_a_judgement_and_an_inconsistent_one_is_not_punished(researcher):
    survey = _survey(researcher, assignments_per_hit=2)
    first = claimed(survey, "w1")
    result = services.assignment_submit(assignment=first, answers=_answers(first, consistent=True))
    second = claimed(survey, "w2")
    if second.hit_id != first.hit_id:  # the same pairs for both, whatever the claim order
        pytest.skip("claim order put w2 on another HIT")
    result2 = services.assignment_submit(assignment=second, answers=_answers(second, consistent=False))
    assert result.checks_failed == 0 and result2.checks_failed == 0 and not result2.flagged
    n_pairs = first.hit.items.filter(kind=HITItem.Kind.CONV_PAIR).count()
    questions = survey.aspects.count()
    assert ConversationJudgement.objects.filter(assignment=first).count() == n_pairs * questions  # repeat not stored
    checks = AttentionAnswer.objects.filter(item__kind=HITItem.Kind.CONV_PAIR_REPEAT)
    assert dict(checks.values_list("assignment__annotator__worker_id", "passed")) == {"w1": True, "w2": False}
    part = report_build(dataset=survey.dataset, apply_exclusions=False)["conversations"]
    [row] = part["acute_consistency"]
    assert (row["repeats"], row["consistent"], row["n_annotators"]) == (2, 1, 2)
    assert row["rate"] == 0.5
    # Wilson 95% for 1 of 2, worked out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    z, n, p = 1.959963984540054, 2, 0.5
    centre, half = (
        (p + z * z / (2 * n)) / (1 + z * z / n),
        z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n),
    )
    assert row["ci_low"] == pytest.approx(centre - half) and row["ci_high"] == pytest.approx(centre + half)


def test_simulated_careful_annotators_mirror_every_repeat_of_a_clear_pair(researcher):
    """Simulated careful annotators answer a repeat mirrored unless the pair is close (latent
    qualities within 0.1), where they may go either way, as a person might."""
    import io

    from django.core.management import call_command

    from annotation.kinds.conversation.simulation import conversation_quality

    survey = _survey(researcher, assignments_per_hit=2)
    call_command("simulate_ratings", survey.name, "--annotators", "4", stdout=io.StringIO())
    checks = AttentionAnswer.objects.filter(
        item__kind=HITItem.Kind.CONV_PAIR_REPEAT, assignment__hit__survey=survey
    ).select_related("item__conversation", "item__conversation_b")
    assert checks.count() == survey.hits.count() * 2  # every repeat answered by both annotators of its task
    for check in checks:
        gap = abs(
            conversation_quality(check.item.conversation, []) - conversation_quality(check.item.conversation_b, [])
        )
        if gap >= 0.1:  # the repeat mirrors the first answer (noise and all) unless the pair is close
            assert check.passed
