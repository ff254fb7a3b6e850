"""Best-worst scaling statistics (analysis/stats/bws.py) against direct computations: counting
scores by plain counting, the Bradley-Terry fit of the implied pairs by scipy.optimize on a
likelihood written out here, and split-half reliability on annotators who agree or guess."""

import collections
import random

import numpy as np
import pytest
from scipy import optimize

from analysis.stats import bws
from annotation.kinds.bws.tuples import balanced_tuples

N_SYSTEMS = 5
QUALITY = np.array([0.9, 0.7, 0.5, 0.3, 0.1])  # system s's replies are about this good


def _study(*, n_contexts=30, annotators=3, noise=0.1, seed=0, size=4):
    """Judgements of balanced tuples: each context has one reply per system (item = context * S + s);
    an annotator picks best and worst by the reply's quality plus noise (pure guessing when noise is None)."""
    rng = random.Random(seed)
    judgements, groups = [], []
    for context in range(n_contexts):
        items = [context * N_SYSTEMS + s for s in range(N_SYSTEMS)]
        quality = {item: QUALITY[item % N_SYSTEMS] + rng.gauss(0, 0.1) for item in items}
        for t, members in enumerate(balanced_tuples(items, size, rng)):
            for _ in range(annotators):
                if noise is None:
                    best, worst = rng.sample(members, 2)
                else:
                    seen = {m: quality[m] + rng.gauss(0, noise) for m in members}
                    best, worst = max(members, key=seen.get), min(members, key=seen.get)
                judgements.append((context, members, best, worst))
                groups.append((context, t))
    system_of = [item % N_SYSTEMS for item in range(n_contexts * N_SYSTEMS)]
    return judgements, groups, system_of


def test_counting_scores_are_best_minus_worst_over_appearances():
    judgements, _, system_of = _study(noise=0.3)
    n_items = len(system_of)
    best, worst, shown = collections.Counter(), collections.Counter(), collections.Counter()
    for _, members, b, w in judgements:
        best[b] += 1
        worst[w] += 1
        shown.update(members)
    score, *_ = bws.counting_scores(judgements, n_items)
    for item in range(n_items):
        assert score[item] == pytest.approx((best[item] - worst[item]) / shown[item])
    system_score, system_shown = bws.system_counting(judgements, system_of, N_SYSTEMS)
    for s in range(N_SYSTEMS):
        mine = [i for i in range(n_items) if system_of[i] == s]
        expected = (sum(best[i] for i in mine) - sum(worst[i] for i in mine)) / sum(shown[i] for i in mine)
        assert system_score[s] == pytest.approx(expected)
        assert system_shown[s] == sum(shown[i] for i in mine)
    # better systems score higher, and every score is in [-1, 1]
    assert list(np.argsort(-system_score)) == list(range(N_SYSTEMS))
    assert np.all(np.abs(score) <= 1)


def test_each_judgement_implies_2k_minus_3_pairs():
    context, winner, loser = bws.implied_pairs([(0, [10, 11, 12, 13], 12, 10)])
    assert sorted(zip(winner.tolist(), loser.tolist(), strict=True)) == sorted(
        [(12, 10), (12, 11), (12, 13), (11, 10), (13, 10)]
    )
    assert context.tolist() == [0] * 5


def _direct_bt(judgements, system_of):
    """Bradley-Terry maximum likelihood on the implied pairs, written out and minimised by scipy."""
    pairs = []
    for _, members, best, worst in judgements:
        pairs += [(system_of[best], system_of[m]) for m in members if m != best]
        pairs += [(system_of[m], system_of[worst]) for m in members if m not in (best, worst)]
    pairs = [(won, lost) for won, lost in pairs if won != lost]

    def loss(free):
        s = np.concatenate([[0.0], free])  # system 0 fixed at 0: the scale's origin
        return sum(np.log1p(np.exp(s[lost] - s[won])) for won, lost in pairs)

    free = optimize.minimize(loss, np.zeros(N_SYSTEMS - 1), method="BFGS").x
    strengths = np.concatenate([[0.0], free])
    return strengths - strengths.mean()


def test_bradley_terry_strengths_match_a_direct_fit_and_intervals_cover_them():
    judgements, _, system_of = _study(n_contexts=12, annotators=2, noise=0.4, seed=3)
    names = [f"s{s}" for s in range(N_SYSTEMS)]
    result = bws.strengths(judgements, system_of, names, n_boot=200, seed=0)
    direct = _direct_bt(judgements, system_of)
    fitted = np.array([result["strengths"][s] for s in range(N_SYSTEMS)])
    assert fitted == pytest.approx(direct, abs=2e-3)  # the ridge (1e-4) moves them a hair
    for row in result["systems"]:
        assert row["ci_low"] <= row["strength"] <= row["ci_high"]
    assert [row["system"] for row in result["systems"]] == names  # best first, as the qualities say


def test_a_tiny_case_solved_by_hand():
    """Two systems, one reply each, plus a third always picked worst: A is best in 3 of 4 tuples.
    Implied pairs between A and B: A beats B 3 times, B beats A once, so exp(sA - sB) = 3."""
    system_of = [0, 1, 2]
    judgements = [(c, [0, 1, 2], 0 if c < 3 else 1, 2) for c in range(4)]
    result = bws.strengths(judgements, system_of, ["A", "B", "C"], n_boot=0)
    strengths = result["strengths"]
    # C never beats anyone: only the ridge keeps it finite, but A - B is pinned by their own pairs
    assert strengths[0] - strengths[1] == pytest.approx(np.log(3), abs=0.05)


def test_split_half_reliability_is_high_for_agreeing_annotators_and_low_for_guessers():
    judgements, groups, system_of = _study(annotators=6, noise=0.05)
    agreeing = bws.split_half(judgements, groups, len(system_of), splits=20)
    judgements, groups, system_of = _study(annotators=6, noise=None)
    guessing = bws.split_half(judgements, groups, len(system_of), splits=20)
    assert agreeing["spearman_brown"] > 0.8
    assert abs(guessing["rho"]) < 0.25
    assert agreeing["spearman_brown"] == pytest.approx(2 * agreeing["rho"] / (1 + agreeing["rho"]))
    assert agreeing["splits"] == 20 and agreeing["n_items"] == len(system_of)


def test_split_half_without_repeats_says_nothing():
    # one tuple per context (size = systems), one annotator: no reply is judged in both halves
    judgements, groups, system_of = _study(annotators=1, noise=0.1, size=N_SYSTEMS)
    result = bws.split_half(judgements, groups, len(system_of), splits=5)
    assert result["rho"] is None and result["spearman_brown"] is None
