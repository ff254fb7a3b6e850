"""An ACUTE-Eval survey's submissions: each question answered with one side (no tie), an optional
one-line reason, stored per survey as ConversationJudgement rows with the sides as shown
(`conversation_a` the left, `position_known`); a check pair judged by its main question, a
repeat (sides swapped) by whether its main answer mirrors the one given to the pair it repeats
(stored as a check, never as a judgement: it would count the pair twice)."""

from annotation.kinds.base import SubmissionRefused
from annotation.models import Aspect, AttentionAnswer, ConversationJudgement, HITItem
from annotation.services.text.answer_seconds import seconds_or_none

MAX_REASON = 200
QUESTION_CHARS = 300  # ConversationJudgement.question
MIRRORED = {"a": "b", "b": "a"}


def failed_acute_checks(checks, items):
    """Failed check pairs (what the attention policy acts on); an inconsistent repeat is not counted."""
    gold = {item.pk for item in items if item.kind == HITItem.Kind.CONV_PAIR_GOLD}
    return sum(1 for check in checks if not check.passed and check.item_id in gold)


def acute_rows(*, assignment, annotator, survey, items, answers, aspects):
    judgements, checks = [], []
    for number, item in enumerate(items, start=1):
        answer = answers[item.pk]
        scores = answer.get("scores") or {}
        unknown = sorted(set(scores) - set(aspects))
        if unknown:
            raise SubmissionRefused(f"Comparison {number}: unknown question(s) {', '.join(unknown[:5])}.")
        chosen = {}
        for key in aspects:
            value = str(scores[key]).strip()
            if value not in ("a", "b"):
                raise SubmissionRefused(f"Comparison {number}: choose conversation 1 or 2, not {value!r}.")
            chosen[key] = value
        reason = " ".join(str(answer.get("reason") or "").split())
        if len(reason) > MAX_REASON:
            raise SubmissionRefused(f"Comparison {number}: the reason may have at most {MAX_REASON} characters.")
        seconds = seconds_or_none(answer.get("seconds"))
        if item.kind == HITItem.Kind.CONV_PAIR_GOLD:
            real = "a" if item.instructed_score == 0 else "b"
            main = chosen[Aspect.OVERALL]
            checks.append(
                AttentionAnswer(
                    assignment=assignment, item=item, score=int(main == "b"), passed=main == real, seconds=seconds
                )
            )
            continue
        if item.kind == HITItem.Kind.CONV_PAIR_REPEAT:
            original = str((answers.get(item.repeat_of_id) or {}).get("scores", {}).get(Aspect.OVERALL, "")).strip()
            main = chosen[Aspect.OVERALL]
            checks.append(
                AttentionAnswer(
                    assignment=assignment,
                    item=item,
                    score=int(main == "b"),
                    passed=original == MIRRORED.get(main),
                    seconds=seconds,
                )
            )
            continue
        judgements += [
            ConversationJudgement(
                survey=survey,
                annotator=annotator,
                assignment=assignment,
                conversation_a_id=item.conversation_id,
                conversation_b_id=item.conversation_b_id,
                winner=value,
                question=aspects[key].question[:QUESTION_CHARS],
                reason=reason,
                position_known=True,
                seconds=seconds,
            )
            for key, value in chosen.items()
        ]
    return judgements, checks, []
