"""Best-worst tuples (annotation/kinds/bws/tuples.py, pure): every reply shown about equally often,
and every two replies shown together about equally often, far more evenly than random tuples."""

import itertools
import random
import statistics

import pytest

from annotation.kinds.bws.tuples import appearance_counts, balanced_tuples, pair_counts, tuple_count


def _random_tuples(items, size, n_tuples, rng):
    return [rng.sample(items, size) for _ in range(n_tuples)]


@pytest.mark.parametrize(("n_items", "size"), [(5, 4), (6, 4), (8, 4), (9, 3), (12, 4), (20, 5), (7, 3)])
def test_every_item_appears_within_one_of_every_other(n_items, size):
    items = [f"r{i}" for i in range(n_items)]
    for seed in range(5):
        tuples = balanced_tuples(items, size, random.Random(seed))
        assert len(tuples) == tuple_count(n_items, size)
        assert all(len(members) == size and len(set(members)) == size for members in tuples)
        counts = appearance_counts(tuples)
        assert set(counts) == set(items)  # nobody left out
        assert max(counts.values()) - min(counts.values()) <= 1, counts


@pytest.mark.parametrize(("n_items", "size", "n_tuples"), [(8, 4, 16), (10, 4, 20), (12, 4, 30), (9, 3, 24)])
def test_pair_cooccurrence_is_far_more_even_than_random(n_items, size, n_tuples):
    items = list(range(n_items))
    balanced = pair_counts(balanced_tuples(items, size, random.Random(1), n_tuples=n_tuples), items)
    spread = max(balanced.values()) - min(balanced.values())
    random_spreads = []
    random_sds = []
    for seed in range(200):
        met = pair_counts(_random_tuples(items, size, n_tuples, random.Random(seed)), items)
        random_spreads.append(max(met.values()) - min(met.values()))
        random_sds.append(statistics.pstdev(met.values()))
    # a greedy design keeps every pair within a couple of meetings of every other...
    assert spread <= 2, balanced
    # ...where random tuples of the same number spread far wider, nearly always
    assert spread < statistics.mean(random_spreads)
    assert statistics.pstdev(balanced.values()) < 0.6 * statistics.mean(random_sds)
    assert sum(s <= spread for s in random_spreads) / len(random_spreads) < 0.05


def test_every_pair_meets_when_there_are_enough_tuples():
    items = list(range(8))
    met = pair_counts(balanced_tuples(items, 4, random.Random(3), n_tuples=14), items)
    assert min(met.values()) >= 1
    assert len(met) == len(list(itertools.combinations(items, 2)))


def test_few_items_make_one_tuple_of_all_and_the_order_is_drawn():
    assert [sorted(t) for t in balanced_tuples(["a", "b", "c"], 4, random.Random(0))] == [["a", "b", "c"]]
    orders = {tuple(balanced_tuples(list("abcd"), 4, random.Random(seed))[0]) for seed in range(20)}
    assert len(orders) > 5  # the shown order is drawn, so position does not follow the system order


def test_the_same_seed_gives_the_same_tuples():
    items = list(range(10))
    assert balanced_tuples(items, 4, random.Random(7)) == balanced_tuples(items, 4, random.Random(7))
