"""Which pairs of systems a pairwise survey shows for each context, and on which side (no Django).

Two plans: every pair of the chosen systems for every context (`budget=0`), or `budget`
comparisons per context taken in turn from one cycle over all system pairs, so that across the
survey every pair is compared about equally often. With an `anchor` (the reference pseudo-system
of a "reference only" survey) the pairs are each other system against the anchor and no others, so
every system meets the anchor equally often. Either way the side is chosen per comparison:
the system that has so far been shown on the left less often goes left (ties broken at random),
so every system is about as often left as right and position bias cancels out of the ranking.
"""

import itertools
import random


def all_pairs(systems):
    """Every unordered pair of `systems` (in the order given), each once."""
    return list(itertools.combinations(systems, 2))


class PairPlanner:
    """Hands out `(left, right)` system pairs context by context; seeded, so a layout is repeatable."""

    def __init__(self, systems, *, budget=0, seed=0, anchor=None):
        self.systems = list(systems) + ([anchor] if anchor is not None and anchor not in systems else [])
        self.budget = budget
        self.rng = random.Random(seed)
        if anchor is None:
            self.cycle = all_pairs(self.systems)
        else:
            self.cycle = [(system, anchor) for system in self.systems if system != anchor]
        self.rng.shuffle(self.cycle)
        self.next_index = 0
        self.left_count = dict.fromkeys(self.systems, 0)
        self.shown_count = dict.fromkeys(self.systems, 0)

    def _oriented(self, first, second):
        # Fewer appearances on the left so far (relative to appearances) goes left now.
        share_first = self.left_count[first] - self.shown_count[first] / 2
        share_second = self.left_count[second] - self.shown_count[second] / 2
        if share_first == share_second:
            left, right = (first, second) if self.rng.random() < 0.5 else (second, first)
        else:
            left, right = (first, second) if share_first < share_second else (second, first)
        self.left_count[left] += 1
        for system in (left, right):
            self.shown_count[system] += 1
        return left, right

    def pairs_for(self, available):
        """The oriented pairs for one context whose responses come from the systems in `available`."""
        available = set(available)
        usable = [pair for pair in self.cycle if pair[0] in available and pair[1] in available]
        if not usable:
            return []
        if not self.budget or self.budget >= len(usable):
            chosen = [pair for pair in self.cycle if pair in usable]
        else:
            chosen = []
            while len(chosen) < self.budget:
                pair = self.cycle[self.next_index % len(self.cycle)]
                self.next_index += 1
                if pair in usable and pair not in chosen:
                    chosen.append(pair)
        return [self._oriented(*pair) for pair in chosen]
