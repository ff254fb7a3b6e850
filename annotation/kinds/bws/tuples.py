"""Which replies a best-worst tuple shows together: a balanced design, pure (no Django).

Every item (a context's response) should appear in about as many tuples as every other, and every
two items should meet about as often as any other two: an item that always meets the strongest
one is picked best less often through no fault of its own, and counting scores (best - worst,
over appearances) would charge it for its company.

The generator is greedy and deterministic given its random generator:

- appearances: each tuple takes the items shown least often so far (the lowest counts first, ties
  drawn), so counts always differ by at most one: taking the k lowest of counts in {m, m+1} leaves
  them in {m, m+1} or {m+1, m+2};
- co-occurrence: among the items of equal count, a tuple is filled one member at a time with the
  item that has met the members chosen so far least often (ties drawn).

Of `RESTARTS` such designs (ties drawn differently) the one whose pair meetings spread least is kept.
The number of tuples is `ceil(appearances * n / k)` (each item shown about `appearances` times);
with no more items than `k` one tuple shows them all.
"""

import itertools
import math

# How many tuples each item appears in by default: twice is the usual design (Kiritchenko and
# Mohammad 2017 find 1.5n-2n tuples of 4 reliable enough); more costs annotators' time.
APPEARANCES = 2
# Greedy designs drawn per context, the most even kept: a context has a handful of systems, so
# this costs milliseconds, and it narrows the spread of pair meetings by about one.
RESTARTS = 30


def tuple_count(n_items, size, appearances=APPEARANCES):
    """How many tuples show each of `n_items` items about `appearances` times."""
    if n_items <= size:
        return 1
    return math.ceil(appearances * n_items / size)


def balanced_tuples(items, size, rng, *, n_tuples=None, appearances=APPEARANCES, restarts=RESTARTS):
    """`n_tuples` tuples of `min(size, len(items))` distinct items each, the members of each in a
    drawn order (the order the page shows them in): the most even of `restarts` greedy designs
    (each as even in appearances; they differ in how evenly pairs meet)."""
    items = list(items)
    size = min(size, len(items))
    if size < 2:
        return []
    n_tuples = tuple_count(len(items), size, appearances) if n_tuples is None else n_tuples
    best, best_key = None, None
    for _ in range(restarts if len(items) > size else 1):
        tuples = greedy_tuples(items, size, n_tuples, rng)
        met = pair_counts(tuples, items).values()
        key = (max(met) - min(met), sum(count * count for count in met))
        if best_key is None or key < best_key:
            best, best_key = tuples, key
    return best


def greedy_tuples(items, size, n_tuples, rng, *, allowed=None):
    """Tuples built one member at a time: among the items `allowed` beside the members so far (by
    default: not one of them) and shown fewest times, the one that has met those members least."""
    allowed = allowed or (lambda item, members: item not in members)
    shown = dict.fromkeys(items, 0)
    met = {}  # frozenset pair: times shown together
    tuples = []
    for _ in range(n_tuples):
        members = []
        for _ in range(size):
            remaining = [item for item in items if allowed(item, members)]
            fewest = min(shown[item] for item in remaining)
            candidates = [item for item in remaining if shown[item] == fewest]
            # how often each candidate has met the members so far, plus a draw to break ties
            scored = [
                (sum(met.get(frozenset((item, member)), 0) for member in members), rng.random(), item)
                for item in candidates
            ]
            members.append(min(scored)[2])
        for pair in itertools.combinations(members, 2):
            met[frozenset(pair)] = met.get(frozenset(pair), 0) + 1
        for item in members:
            shown[item] += 1
        rng.shuffle(members)
        tuples.append(members)
    return tuples


def appearance_counts(tuples):
    """`{item: tuples it appears in}`."""
    counts = {}
    for members in tuples:
        for item in members:
            counts[item] = counts.get(item, 0) + 1
    return counts


def pair_counts(tuples, items):
    """How often each two of `items` appear together (every pair of them, met or not)."""
    met = {frozenset(pair): 0 for pair in itertools.combinations(items, 2)}
    for members in tuples:
        for pair in itertools.combinations(members, 2):
            met[frozenset(pair)] += 1
    return met
