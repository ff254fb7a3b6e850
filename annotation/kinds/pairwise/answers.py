"""Checking a pairwise HIT's answers and turning them into rows (the submit path of `assignments`).

Answers arrive as the rating task's do (`score-<item>-<aspect>` = "a" | "b" | "tie", plus
`strength-<item>` and `reason-<item>`, both optional). A pair item becomes one judgement per
aspect, stored with the left reply as `response_a`; a gold pair passes when the real reply is
chosen; a repeat passes when its answer mirrors the answer to the pair it repeats (A on one is B
on the other, a tie stays a tie). Only failed gold pairs count as failed attention checks: an
inconsistent repeat may be honest doubt about a close pair, so it is reported, not punished.
A filler pair (beside a check, so that its block is shaped as a real one) is answered and checked
as a real pair is, and makes no row.

A strength ("how much better") belongs to the side chosen on the main question: with a tie there
is none, so a strength sent with a tie is dropped, not refused (`kept_strength`). It was given for a
side the annotator then withdrew (the page's script clears it, a page without script cannot), and
refusing would only make them find and undo an optional answer; the tie itself is the honest answer.
"""

from annotation.models import AttentionAnswer, HITItem, PairwiseJudgement

WINNERS = ("a", "b", "tie")
STRENGTHS = ("", "slight", "clear")
MAX_REASON_CHARS = 200
# AttentionAnswer keeps an integer: the choice coded as 1 = A (left), 2 = B (right), 0 = tie.
ANSWER_CODES = {"a": 1, "b": 2, "tie": 0}
MIRRORED = {"a": "b", "b": "a", "tie": "tie"}


class PairAnswerError(ValueError):
    """An answer is not one the page offers; the message names the pair as the page numbers it
    ("Pair 3", never its row id) and is safe to show."""


def _winner(value, number, allow_tie):
    winner = str(value or "").strip().lower()
    if winner not in WINNERS or (winner == "tie" and not allow_tie):
        allowed = "A, B or tie" if allow_tie else "A or B"
        raise PairAnswerError(f"Pair {number}: {value!r} is not a choice here (choose {allowed}).")
    return winner


def kept_strength(winner, strength):
    """The strength kept with the main question's answer `winner`: none with a tie (see above).

    Shared by the submission and by a page filled again from earlier answers (a refused submission,
    a restored MTurk draft), so that the page never shows what would not be stored."""
    return "" if str(winner or "").strip().lower() == "tie" else strength


def _optional(answer, number):
    strength = str(answer.get("strength") or "").strip().lower()
    if strength not in STRENGTHS:
        raise PairAnswerError(f"Pair {number}: {strength!r} is not a strength (slight or clear).")
    reason = " ".join(str(answer.get("reason") or "").split())
    if "\x00" in reason:  # cannot be typed, and PostgreSQL cannot store it in text
        raise PairAnswerError(f"Pair {number}: the reason holds a NUL character, which cannot be stored.")
    if len(reason) > MAX_REASON_CHARS:
        raise PairAnswerError(f"Pair {number}: a reason may have at most {MAX_REASON_CHARS} characters.")
    return strength, reason


def pairwise_rows(*, assignment, annotator, survey, items, answers, aspects, seconds_of):
    """`(judgements, checks)` for a validated pairwise submission (every item answered).

    `items` in page order: a refusal names the pair by its number there, counted from 1.
    """
    judgements, checks = [], []
    for number, item in enumerate(items, start=1):
        answer = answers[item.pk]
        scores = answer.get("scores") or {}
        wanted = set(aspects)  # check pairs are asked every question too (see task_page.items)
        extra = sorted(set(scores) - wanted)
        if extra:
            raise PairAnswerError(f"Pair {number}: unknown question(s) {', '.join(extra)}.")
        seconds = seconds_of(answer.get("seconds"))
        if item.kind == HITItem.Kind.PAIR:
            strength, reason = _optional(answer, number)
            # what the survey does not ask for is not stored, though a hand-made request may send it
            strength = strength if survey.ask_strength else ""
            reason = reason if survey.ask_reason else ""
            for key in sorted(wanted):
                winner = _winner(scores[key], number, survey.allow_tie)
                judgements.append(
                    PairwiseJudgement(
                        survey=survey,
                        annotator=annotator,
                        assignment=assignment,
                        context_id=item.context_id,
                        response_a_id=item.response_id,
                        response_b_id=item.response_b_id,
                        aspect=key,
                        winner=winner,
                        strength=kept_strength(winner, strength) if key == "overall" else "",
                        reason=reason if key == "overall" else "",
                        seconds=seconds,
                    )
                )
            continue
        if item.kind == HITItem.Kind.PAIR_FILLER:
            # A filler pair beside a check (layout.py): answered and checked as a real pair is,
            # so the check's block looks and behaves like a real one, never stored (the pair is
            # judged on its own HIT; kept, it would count twice in agreement and the ranking).
            _optional(answer, number)
            for key in wanted:
                _winner(scores[key], number, survey.allow_tie)
            continue
        _optional(answer, number)  # its strength and reason boxes too, as on any pair: checked, not kept
        for key in wanted:  # a check pair's other answers are checked, not kept
            _winner(scores[key], number, survey.allow_tie)
        winner = _winner(scores["overall"], number, survey.allow_tie)
        if item.kind == HITItem.Kind.PAIR_GOLD:
            real_side = "a" if item.response_id else "b"
            passed = winner == real_side
        else:
            original = answers.get(item.repeat_of_id, {}).get("scores", {}).get("overall")
            passed = original is not None and MIRRORED[winner] == str(original).strip().lower()
        checks.append(
            AttentionAnswer(
                assignment=assignment, item=item, score=ANSWER_CODES[winner], passed=passed, seconds=seconds
            )
        )
    return judgements, checks


def failed_checks(checks, items):
    """Failed gold pairs (what the attention policy acts on); inconsistent repeats are not counted."""
    gold = {item.pk for item in items if item.kind == HITItem.Kind.PAIR_GOLD}
    return sum(1 for check in checks if not check.passed and check.item_id in gold)
