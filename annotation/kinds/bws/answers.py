"""Checking a best-worst HIT's answers and turning them into rows (the submit path of `assignments`).

Each tuple item is answered by two fields, `score-<item>-best` and `score-<item>-worst`, each the
number (1, 2, ...) of a reply as the page shows it in the tuple. Best and worst must be two
different replies: the page's script prevents picking one reply for both, and a request that does
so anyway (a page without script, a hand-made request) is refused here, naming the tuple.
A real tuple becomes one `BWSJudgement`; a gold tuple passes when its planted broken reply was
picked worst (picking anything else worst, or the broken reply best, fails it). A filler tuple
(beside a gold one, so its block is shaped as a real one) is checked as a real one and makes no row.
"""

from annotation.models import AttentionAnswer, BWSJudgement, HITItem

KEYS = ("best", "worst")


class TupleAnswerError(ValueError):
    """An answer is not one the page offers; the message names the tuple as the page numbers it."""


def _pick(value, number, size, key):
    text = str(value or "").strip()
    if not text.isdigit() or not 1 <= int(text) <= size:
        raise TupleAnswerError(f"Set {number}: {value!r} is not a reply of this set to pick as {key} (1 to {size}).")
    return int(text) - 1


def picks(answer, number, size):
    """`(best, worst)` as indices into the tuple; refuses one reply picked as both."""
    scores = answer.get("scores") or {}
    extra = sorted(set(scores) - set(KEYS))
    if extra:
        raise TupleAnswerError(f"Set {number}: unknown question(s) {', '.join(extra)}.")
    best, worst = (_pick(scores.get(key), number, size, key) for key in KEYS)
    if best == worst:
        raise TupleAnswerError(
            f"Set {number}: the same reply cannot be both the best and the worst; pick two different replies."
        )
    return best, worst


def bws_rows(*, assignment, annotator, survey, items, answers, seconds_of):
    """`(judgements, checks)` for a validated best-worst submission (every item answered)."""
    judgements, checks = [], []
    for number, item in enumerate(items, start=1):
        answer = answers[item.pk]
        members = list(item.tuple_responses)
        best, worst = picks(answer, number, len(members))
        seconds = seconds_of(answer.get("seconds"))
        if item.kind == HITItem.Kind.BWS:
            judgements.append(
                BWSJudgement(
                    survey=survey,
                    annotator=annotator,
                    assignment=assignment,
                    item=item,
                    context_id=item.context_id,
                    responses=members,
                    best_id=members[best],
                    worst_id=members[worst],
                    seconds=seconds,
                )
            )
        elif item.kind == HITItem.Kind.BWS_GOLD:
            # AttentionAnswer keeps an integer: the number of the reply picked worst.
            checks.append(
                AttentionAnswer(
                    assignment=assignment,
                    item=item,
                    score=worst + 1,
                    passed=members[worst] is None,
                    seconds=seconds,
                )
            )
    return judgements, checks
