"""A best-worst HIT's items from its planned sets, shared by the within- and across-context layouts."""

from annotation.kinds.pairwise.layout import BROKEN_REPLIES
from annotation.models import HITItem


def hit_items(hit, entries, rng):
    """The HIT's items in order from `(kind, context id, shown response ids)` entries; a gold set
    draws the text of its broken reply."""
    return [
        HITItem(
            hit=hit,
            position=position,
            kind=kind,
            context_id=context_id,
            tuple_responses=members,
            broken_text=rng.choice(BROKEN_REPLIES) if kind == HITItem.Kind.BWS_GOLD else "",
        )
        for position, (kind, context_id, members) in enumerate(entries)
    ]
