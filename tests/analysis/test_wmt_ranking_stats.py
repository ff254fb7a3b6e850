"""The WMT ranking's significance tests (issue 39), each against a plain re-computation: the
batched SPA of many draws against `soft_pairwise_accuracy` one draw at a time, the acc*_eq
credits against the calibration's best accuracy, both tests' p-values against loops that redo
every draw with the same random numbers, and the early stopping rule by hand."""

import numpy as np
import pytest

from analysis.stats.pairwise_accuracy import pairs_within_groups, tie_calibration, utterance_pairwise_accuracy
from analysis.stats.spa import permutation_signs, score_matrix, soft_pairwise_accuracy
from analysis.stats.wmt_ranking import (
    BLOCK_SIZE,
    PermutationTest,
    SpaDraws,
    acc_eq_credits,
    acc_eq_test,
    early_stopped_p,
    run_tests,
    spa_test,
    swap_bits,
    wmt_ranking_with_tests,
    zscore,
)


def early_stopped_p_of(test):
    while not test.settled:
        test.step()
    return test.p, test.used


def study(seed=0, n_systems=4, n_items=30):
    rng = np.random.default_rng(seed)
    systems = np.repeat(np.arange(n_systems), n_items)
    items = np.tile(np.arange(n_items), n_systems)
    quality = rng.normal(0, 1, n_systems)[systems] + rng.normal(0, 1, systems.size)
    human = np.clip(np.round(3 + quality), 1, 5)
    good = quality + rng.normal(0, 0.4, systems.size)
    fair = quality + rng.normal(0, 1.5, systems.size)
    return human, good, fair, systems, items


def test_the_early_stop_ends_at_a_blocks_end_once_p_is_clearly_small_or_large():
    def constant(value):
        return lambda n, rng: np.full(n, value)

    assert early_stopped_p(constant(1.0), 0.5, k=1000, rng=None) == (1.0, BLOCK_SIZE)  # p = 1 > 0.5
    assert early_stopped_p(constant(0.0), 0.5, k=1000, rng=None) == (0.0, BLOCK_SIZE)  # p = 0 < 0.02
    # One draw in ten reaches delta: p = 0.1 stays undecided, so every block up to k is drawn.
    tenth = lambda n, rng: np.where(np.arange(n) % 10 == 0, 1.0, 0.0)  # noqa: E731
    assert early_stopped_p(tenth, 0.5, k=350, rng=None) == (pytest.approx(35 / 350), 350)


@pytest.mark.parametrize("drop", [False, True])
def test_batched_spa_equals_soft_pairwise_accuracy_draw_by_draw(drop):
    human, good, fair, systems, items = study()
    keep = np.ones(human.size, dtype=bool)
    if drop:  # a (system, item) cell without a response: pce's per-pair masks
        keep[5] = False
    draws = SpaDraws(human, systems, items, keep)
    assert draws.complete is not drop
    rows = np.vstack([good[keep], fair[keep], -good[keep]])
    human_matrix = score_matrix(human[keep], systems[keep], items[keep])[0]
    signs = permutation_signs(human_matrix.shape[1])
    expected = [
        soft_pairwise_accuracy(human_matrix, score_matrix(row, systems[keep], items[keep])[0], signs=signs)["spa"]
        for row in rows
    ]
    assert draws.spa(rows) == pytest.approx(expected, abs=1e-12)


def test_acc_eq_credits_sum_to_the_calibrated_accuracy():
    human, good, fair, _systems, items = study(seed=2)
    first, second, group = pairs_within_groups(items)
    sizes = np.bincount(group)
    weights = 1.0 / (sizes[group] * np.count_nonzero(sizes))
    for metric in (good, fair, np.round(good)):
        credits = acc_eq_credits(human[first] - human[second], metric[first] - metric[second], weights)
        best = tie_calibration(human[first] - human[second], metric[first] - metric[second], weights)[0]
        assert credits.sum() == pytest.approx(best)
        assert credits.sum() == pytest.approx(utterance_pairwise_accuracy(human, {"m": metric}, items)[0]["accuracy"])


def test_the_acc_eq_test_equals_a_loop_that_swaps_each_pairs_verdicts():
    human, good, fair, _systems, items = study(seed=3)
    p, used = early_stopped_p_of(acc_eq_test(human, good, fair, items, k=300, seed=7))
    # The same draws, one by one: a pair's verdict is the first metric's or the second's.
    first, second, group = pairs_within_groups(items)
    sizes = np.bincount(group)
    weights = 1.0 / (sizes[group] * np.count_nonzero(sizes))
    hd = human[first] - human[second]
    mine = acc_eq_credits(hd, good[first] - good[second], weights)
    theirs = acc_eq_credits(hd, fair[first] - fair[second], weights)
    rng = np.random.default_rng(7)
    at_least = done = 0
    while done < 300:
        for swapped in swap_bits(rng, BLOCK_SIZE, mine.size).astype(bool):
            one = sum(t if s else m for m, t, s in zip(mine, theirs, swapped, strict=False))
            other = sum(m if s else t for m, t, s in zip(mine, theirs, swapped, strict=False))
            at_least += one - other >= mine.sum() - theirs.sum() - 1e-12
        done += BLOCK_SIZE
        if not 0.02 <= at_least / done <= 0.5:
            break
    assert (p, used) == (pytest.approx(at_least / done), done)


def test_the_spa_test_equals_perm_both_recomputing_spa_in_every_draw():
    human, good, fair, systems, items = study(seed=4, n_systems=3, n_items=12)
    p, used = early_stopped_p_of(spa_test(human, good, fair, systems, items, k=200, seed=5))
    a, b = zscore(good), zscore(fair)
    human_matrix = score_matrix(human, systems, items)[0]

    def spa_of(values):
        return soft_pairwise_accuracy(human_matrix, score_matrix(values, systems, items)[0])["spa"]

    delta = spa_of(a) - spa_of(b)
    rng = np.random.default_rng(5)
    at_least = done = 0
    while done < 200:
        for swapped in rng.random((BLOCK_SIZE, a.size)) < 0.5:
            at_least += spa_of(np.where(swapped, b, a)) - spa_of(np.where(swapped, a, b)) >= delta - 1e-12
        done += BLOCK_SIZE
        if not 0.02 <= at_least / done <= 0.5:
            break
    # The batched test gets the second metric's sign-flip sums as (both - first) in float32, so a
    # draw whose sums tie exactly may round the other way: within two draws of the direct loop.
    assert used == done and p == pytest.approx(at_least / done, abs=2 / done)


def test_the_ranking_tests_every_pair_under_both_statistics_and_separates_a_useless_metric():
    human, good, fair, systems, items = study(seed=6, n_items=60)
    noise = np.random.default_rng(1).normal(size=human.size)
    rows, tests = wmt_ranking_with_tests(human, {"good": good, "fair": fair, "noise": noise}, systems, items)
    assert len(tests) == 6 and all(test["permutations"] % BLOCK_SIZE == 0 for test in tests)
    ranks = {row["metric"]: row for row in rows}
    assert ranks["good"]["average_rank"] < ranks["noise"]["average_rank"]
    assert rows[-1]["metric"] == "noise"


def test_a_budget_gives_every_test_its_first_block_then_shares_the_rest_in_turn():
    undecided = lambda n, rng: np.where(np.arange(n) % 10 == 0, 1.0, 0.0)  # noqa: E731  p = 0.1
    decided = lambda n, rng: np.zeros(n)  # noqa: E731  p = 0
    tests = [PermutationTest(undecided, 0.5, k=1000, seed=0, cost=1.0) for _ in range(2)]
    tests.append(PermutationTest(decided, 0.5, k=1000, seed=0, cost=1.0))
    # 300 first blocks, then 500 more: the two undecided tests take turns (300, 200 more draws).
    assert run_tests(tests, budget=800) == 2
    assert [test.used for test in tests] == [400, 300, 100]
    assert [test.settled for test in tests] == [False, False, True]
    assert run_tests(tests) == 0 and [test.used for test in tests] == [1000, 1000, 100]


def test_when_the_budget_cannot_pay_a_block_for_every_test_the_first_draws_are_shared_equally():
    from analysis.stats.wmt_ranking import MIN_FIRST_DRAWS, first_block_size

    undecided = lambda n, rng: np.where(np.arange(n) % 10 == 0, 1.0, 0.0)  # noqa: E731  p = 0.1
    tests = [PermutationTest(undecided, 0.5, k=1000, seed=0, cost=10.0) for _ in range(4)]
    # A block for each would cost 4 x 100 x 10 = 4,000; 1,000 pays 25 draws each, rounded down to 20.
    assert first_block_size(tests, 1000) == 20 and first_block_size(tests, 4000) == 100
    assert first_block_size(tests, 10) == MIN_FIRST_DRAWS  # never fewer, even past the budget
    assert run_tests(tests, budget=1000) == 4
    assert [(test.used, test.settled) for test in tests] == [(20, False)] * 4


def test_swap_bits_are_fair_coins():
    bits = swap_bits(np.random.default_rng(0), 200, 1003)
    assert bits.shape == (200, 1003) and set(np.unique(bits)) == {0.0, 1.0}
    assert abs(bits.mean() - 0.5) < 0.01
