"""Pairwise judging with position swap, and the statistics of its verdicts.

Each pair is judged twice, once with reply A shown first and once with reply B shown first. A
verdict is mapped back to the underlying reply ("A" or "B" of the pair, whatever position it
was shown in). From the two orders:
- agreement with the human winner: the share of human judgements with a winner (not a tie) where
  the judge, consistent across both orders, picked the same reply (an inconsistent pair counts as a
  disagreement: the judge did not tell them apart);
- position bias: the share of readable verdicts that picked whatever was shown first (0.5 is none);
- self-consistency: the share of pairs, both orders readable, where both orders picked the same reply.
Agreement counts every human judgement; position bias and self-consistency are the judge's own
behaviour, so they count each distinct pair once, however many people judged it (its prompts, and
so its verdicts, are the same each time).
"""

import json
from dataclasses import dataclass

from scoring.judges import prompts

TIE = "tie"


@dataclass(frozen=True)
class PairItem:
    context: list  # the turns before the replies
    reply_a: str
    reply_b: str
    human_winner: str | None  # "A", "B", "tie" or None (not rated)


@dataclass(frozen=True)
class PairVerdict:
    """The reply (A or B of the pair, or None: unreadable) picked in each order."""

    a_first: str | None
    b_first: str | None

    @property
    def consistent(self):
        return self.a_first is not None and self.a_first == self.b_first


def both_orders_messages(template, item):
    """The two prompts of a pair: A shown first, then B shown first."""
    return (
        prompts.pairwise_messages(template, context=item.context, first=item.reply_a, second=item.reply_b),
        prompts.pairwise_messages(template, context=item.context, first=item.reply_b, second=item.reply_a),
    )


def verdict_from_picks(a_first_pick, b_first_pick):
    """Map the picks ("A", "B" or None, as shown) of both orders back to the pair's replies: in the
    swapped order the reply shown as "A" is the pair's B."""
    swapped = {"A": "B", "B": "A", None: None}
    return PairVerdict(a_first_pick, swapped[b_first_pick])


def pair_key(item):
    """What makes two items the same pair for the judge: the same context and the same two replies,
    in either order. Shown the other way round (another survey's layout, an imported file's order),
    a pair is asked the same two prompts, so its verdicts are the same ones, mirrored."""
    return json.dumps(item.context, sort_keys=True, default=str), *sorted((item.reply_a, item.reply_b))


def pairwise_statistics(items, verdicts):
    """Agreement with the human winners (over items), position bias and self-consistency (over
    distinct pairs) of `verdicts`, one per item."""
    if len(items) != len(verdicts):
        raise ValueError(f"{len(items)} pairs but {len(verdicts)} verdicts")
    agree = with_winner = 0
    distinct = {}
    for item, verdict in zip(items, verdicts, strict=True):
        distinct.setdefault(pair_key(item), verdict)
        if item.human_winner in ("A", "B"):
            with_winner += 1
            agree += verdict.consistent and verdict.a_first == item.human_winner
    first_picks = readable = 0
    consistent = both_readable = 0
    for verdict in distinct.values():
        # "A" first: a pick of A is a first-position pick; B first: a pick of B is.
        for picked, first in ((verdict.a_first, "A"), (verdict.b_first, "B")):
            if picked is not None:
                readable += 1
                first_picks += picked == first
        if verdict.a_first is not None and verdict.b_first is not None:
            both_readable += 1
            consistent += verdict.consistent
    return {
        "n_pairs": len(distinct),
        "n_judgements": len(items),
        "n_verdicts": 2 * len(distinct),
        "unreadable_verdicts": 2 * len(distinct) - readable,
        "agreement_with_humans": _share(agree, with_winner),
        "n_with_human_winner": with_winner,
        "position_bias": _share(first_picks, readable),
        "self_consistency": _share(consistent, both_readable),
        "n_both_orders_readable": both_readable,
    }


def _share(part, whole):
    return part / whole if whole else None
