"""Best-worst tuples across contexts: each tuple shows replies to different conversations, balanced
as the per-context design is (`tuples.balanced_tuples`). Pure (no Django).

The items are `(context, response)` pairs of a group of contexts (one HIT's); a tuple never holds
two replies to one context. The greedy fill is the per-context one with that one rule added:

- appearances: each member is one of the items shown least often so far among those whose context
  is not in the tuple yet (ties drawn), so every item is shown about `appearances` times;
- co-occurrence: among those, the item that has met the members chosen so far least often.

Of `RESTARTS` designs the one whose appearances spread least, then whose pair meetings (between
items of different contexts: the only pairs that can meet) spread least, is kept.
"""

import itertools
import math

from annotation.kinds.bws.tuples import APPEARANCES, RESTARTS, greedy_tuples


def across_tuple_count(n_items, size, appearances=APPEARANCES):
    """How many tuples show each of `n_items` items about `appearances` times."""
    return math.ceil(appearances * n_items / size)


def across_problem(contexts, size):
    """Why tuples of `size` replies to different contexts cannot be drawn from `contexts` (a
    sentence), or None: there must be at least `size` contexts with a reply."""
    if len(contexts) < size:
        return (
            f"A set across conversations shows {size} replies to {size} different conversations: "
            f"a HIT holds {len(contexts)} conversation{'s' if len(contexts) != 1 else ''} with replies."
        )
    return None


def across_tuples(items, size, rng, *, appearances=APPEARANCES, restarts=RESTARTS):
    """Tuples of `size` items (`(context, response)` pairs) with distinct contexts each, members in a
    drawn order; [] when fewer than `size` contexts are given."""
    items = list(items)
    if across_problem({context for context, _ in items}, size):
        return []
    n_tuples = across_tuple_count(len(items), size, appearances)
    best, best_key = None, None
    for _ in range(restarts):
        tuples = greedy_tuples(items, size, n_tuples, rng, allowed=_other_context)
        shown = appearance_spread(tuples, items)
        met = list(cross_pair_counts(tuples, items).values())
        key = (shown, max(met) - min(met), sum(count * count for count in met))
        if best_key is None or key < best_key:
            best, best_key = tuples, key
    return best


def _other_context(item, members):
    """Across contexts: a set holds at most one reply to each context (an item is (context, reply))."""
    return all(item[0] != member[0] for member in members)


def appearance_spread(tuples, items):
    """Most minus fewest appearances of any item (0 or 1 in a balanced design)."""
    counts = dict.fromkeys(items, 0)
    for members in tuples:
        for item in members:
            counts[item] += 1
    return max(counts.values()) - min(counts.values())


def cross_pair_counts(tuples, items):
    """How often each two items of different contexts appear together (met or not)."""
    met = {frozenset(pair): 0 for pair in itertools.combinations(items, 2) if pair[0][0] != pair[1][0]}
    for members in tuples:
        for pair in itertools.combinations(members, 2):
            met[frozenset(pair)] += 1
    return met
