"""Every metric ranked as WMT24/25 rank them: significance clusters under soft pairwise accuracy
(SPA) and under the tie-calibrated pairwise accuracy acc*_eq, ordered by the average of the two
cluster ranks. Pure: numpy only, no Django.

The tests between two metrics follow mt-metrics-eval (`stats.py`, `tasks.py`):
- SPA: PERM-BOTH on the scores (`PermutationSigDiff`): the two metrics' z-scored scores of a
  response are swapped with probability 1/2 and both SPAs recomputed.
- acc*_eq: the pairs permutation (`PairwisePermutationSigDiff`): each metric keeps the tie
  threshold calibrated on its own scores, and the two metrics' verdicts on a pair of responses are
  swapped with probability 1/2 (re-calibrating in every draw would cost a sort per draw).
- Early stopping as `PermutationSigDiffParams` in a task's defaults: permutations run in blocks of
  100, up to k, and stop at a block's end once p < 0.02 or p > 0.5 (the verdict at alpha 0.05 is
  then settled well enough).

Why it is fast enough to rank every metric: the SPA draws of a block are one matrix product (the
fixed 1,000 sign flips times every drawn score matrix), and an acc*_eq draw is a dot product of
the swap signs with the two metrics' per-pair credits.
"""

from itertools import combinations

import numpy as np

from analysis.stats.pairwise_accuracy import pairs_within_groups, tie_calibration
from analysis.stats.permutation import significance_clusters
from analysis.stats.spa import pairwise_p_values, permutation_signs, score_matrix, soft_pairwise_accuracy

BLOCK_SIZE = 100
EARLY_MIN = 0.02
EARLY_MAX = 0.5
MAX_PERMUTATIONS = 1000
# Work a report's ranking may spend, in multiply-adds of its draws (about 7 s of one core here):
# every test gets a first block of 100 draws (fewer, equally shared, when the budget cannot pay
# that: `first_block_size`); after that the undecided tests share what is left, in turn, and a
# test the budget stops says so. An SPA draw costs 1,000 sign flips x the scores compared.
RANKING_BUDGET = 5e10
# Fewest first draws of a test when the budget cannot pay a block of 100 for every test.
MIN_FIRST_DRAWS = 20
# Booleans compared at once in a block of SPA draws (sign flips x draws x system pairs): bounds memory.
CELLS_AT_ONCE = 20_000_000


class PermutationTest:
    """One test between two metrics, drawn a block at a time: `draw_block(n, rng)` gives n
    permuted differences stat(first') - stat(second'); `cost` is the work of one draw (multiply-adds),
    so a ranking can share a budget among its tests."""

    def __init__(self, draw_block, delta, *, k, seed, cost=1.0):
        self.draw_block, self.delta, self.k, self.cost = draw_block, delta, k, cost
        self.rng = np.random.default_rng(seed)
        self.at_least = self.used = 0

    @property
    def p(self):
        return self.at_least / self.used if self.used else 1.0

    @property
    def settled(self):
        """Done: k draws, or p clearly below or above the significance level at a block's end."""
        return self.used >= self.k or (self.used > 0 and not EARLY_MIN <= self.p <= EARLY_MAX)

    def step(self, size=BLOCK_SIZE):
        n = min(size, self.k - self.used)
        self.at_least += int(np.count_nonzero(self.draw_block(n, self.rng) >= self.delta - 1e-12))
        self.used += n
        return n * self.cost


def early_stopped_p(draw_block, delta, *, k, rng=None, seed=0):
    """`(p, used)` of one test run to its end (blocks of `BLOCK_SIZE` until settled)."""
    test = PermutationTest(draw_block, delta, k=k, seed=seed)
    if rng is not None:
        test.rng = rng
    while not test.settled:
        test.step()
    return test.p, test.used


def first_block_size(tests, budget):
    """Draws every test makes first: a block of 100, or, when the budget cannot pay that for every
    test (many metrics on a large study), the equal share it can pay, in tens, at least
    MIN_FIRST_DRAWS (so the budget may then be exceeded)."""
    cost = sum(test.cost for test in tests)
    if budget is None or cost * BLOCK_SIZE <= budget:
        return BLOCK_SIZE
    return max(MIN_FIRST_DRAWS, int(budget / cost) // 10 * 10)


def run_tests(tests, budget=None):
    """Run every test's first block, then further blocks of the unsettled ones in turn while the
    budget (total cost) lasts. Returns how many tests the budget left unsettled."""
    pending = [test for test in tests if not test.settled]
    first = first_block_size(pending, budget)
    spent = sum(test.step(first) for test in pending)
    pending = [test for test in pending if not test.settled]
    while pending:
        if budget is not None and all(spent + BLOCK_SIZE * test.cost > budget for test in pending):
            return len(pending)
        for test in pending:
            if budget is not None and spent + BLOCK_SIZE * test.cost > budget:
                continue
            spent += test.step()
        pending = [test for test in pending if not test.settled]
    return 0


def zscore(values):
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else values - values.mean()


class SpaDraws:
    """SPA of many score vectors of the same responses at once (the humans' p-values computed once)."""

    def __init__(self, human, systems, items, keep):
        self.human_matrix, system_labels, item_labels = score_matrix(human[keep], systems[keep], items[keep])
        _, system_index = np.unique(systems[keep], return_inverse=True)
        _, item_index = np.unique(items[keep], return_inverse=True)
        self.shape = (system_labels.size, item_labels.size)
        self.cells = system_index * item_labels.size + item_index
        counts = np.bincount(self.cells, minlength=self.shape[0] * self.shape[1])
        self.complete = bool((counts > 0).all()) and bool(np.isfinite(self.human_matrix).all())
        self.counts = np.where(counts > 0, counts, 1)
        # Every (system, item) one response, the usual case: a matrix is the scores reordered.
        self.order = np.argsort(self.cells, kind="stable") if (counts == 1).all() else None
        self.signs = permutation_signs(self.shape[1])
        self.upper = np.triu_indices(self.shape[0], 1)
        self.human_p = pairwise_p_values(self.human_matrix, self.signs)[self.upper]

    def matrices(self, rows):
        """`(n, systems, items)` mean score of each cell for each row of `rows` (n x responses)."""
        n, size = rows.shape[0], self.shape[0] * self.shape[1]
        if self.order is not None:
            return rows[:, self.order].reshape(n, *self.shape)
        flat = (np.arange(n)[:, None] * size + self.cells[None, :]).ravel()
        sums = np.bincount(flat, weights=rows.ravel(), minlength=n * size).reshape(n, size)
        return (sums / self.counts).reshape(n, *self.shape)

    def spa(self, rows):
        """SPA of each row (one score per kept response), as `soft_pairwise_accuracy` computes it."""
        rows = np.atleast_2d(rows)
        if not self.complete:  # a (system, item) without a score: pce's per-pair masks, one draw at a time
            return np.array(
                [
                    soft_pairwise_accuracy(self.human_matrix, matrix, signs=self.signs)["spa"]
                    for matrix in self.matrices(rows)
                ]
            )
        return np.concatenate([self._p_metric_to_spa(*self._partials(chunk)) for chunk in self._chunks(rows)])

    def spa_swapped(self, first_rows, both):
        """`(spa(first_rows), spa(both - first_rows))`: the two metrics of PERM-BOTH draws, where `both`
        is the sum of their scores; the second's sign-flip sums are the sum's minus the first's, so a
        draw costs one matrix product, not two."""
        if not self.complete:
            return self.spa(first_rows), self.spa(both[None, :] - first_rows)
        both_partial, both_totals = self._partials(both[None, :])
        firsts, seconds = [], []
        for chunk in self._chunks(first_rows):
            partial, totals = self._partials(chunk)
            firsts.append(self._p_metric_to_spa(partial, totals))
            seconds.append(self._p_metric_to_spa(both_partial - partial, both_totals - totals))
        return np.concatenate(firsts), np.concatenate(seconds)

    def _chunks(self, rows):
        per_chunk = max(CELLS_AT_ONCE // max(self.signs.shape[0] * self.upper[0].size, 1), 1)
        return [rows[start : start + per_chunk] for start in range(0, rows.shape[0], per_chunk)]

    def _partials(self, rows):
        """Sign-flip sums `(flips, n, systems)` and totals `(n, systems)` of each row's matrix
        (float32: pce's arithmetic)."""
        matrices = self.matrices(rows).astype(np.float32)
        n = matrices.shape[0]
        partial = (self.signs @ matrices.reshape(n * self.shape[0], -1).T).reshape(-1, n, self.shape[0])
        return partial, matrices.sum(axis=2)

    def _p_metric_to_spa(self, partial, totals):
        i, j = self.upper
        p_metric = (partial[:, :, i] - partial[:, :, j] >= (totals[:, i] - totals[:, j])[None]).mean(axis=0)
        return 1.0 - np.abs(self.human_p[None, :] - p_metric).mean(axis=1)


def swap_bits(rng, n, size):
    """`(n, size)` of 0.0 / 1.0, each 1 with probability 1/2 (a byte of the generator gives 8)."""
    bits = np.unpackbits(np.frombuffer(rng.bytes(n * ((size + 7) // 8)), dtype=np.uint8).reshape(n, -1), axis=1)
    return bits[:, :size].astype(np.float64)


def _cached(cache, key, make):
    """`make()` once per key when a cache (a dict shared by one ranking's tests) is given."""
    if cache is None:
        return make()
    if key not in cache:
        cache[key] = make()
    return cache[key]


def spa_test(human, first, second, systems, items, *, k, seed, cache=None):
    """PERM-BOTH test that `first` (the better by SPA) beats `second` on SPA (not yet drawn). Tests
    on the same responses share the humans' side through `cache`."""
    keep = np.isfinite(human) & np.isfinite(first) & np.isfinite(second)
    draws = _cached(cache, ("spa", keep.tobytes()), lambda: SpaDraws(human, systems, items, keep))
    a, b = zscore(first[keep]), zscore(second[keep])
    observed = draws.spa(np.vstack([a, b]))
    gap = b - a

    both = a + b

    def draw_block(n, rng):
        swap = rng.random((n, a.size)) < 0.5
        first_spa, second_spa = draws.spa_swapped(a + swap * gap, both)  # a where not swapped, b where swapped
        return first_spa - second_spa

    cost = float(draws.signs.shape[0] * a.size)  # one product a draw: sign flips x scores
    return PermutationTest(draw_block, observed[0] - observed[1], k=k, seed=seed, cost=cost)


def acc_eq_credits(human_diff, metric_diff, weights):
    """Each pair's weight where the metric, at its own best tie threshold, agrees with the humans
    (ties within the threshold, otherwise the sign); they sum to the metric's acc*_eq."""
    _, epsilon, _ = tie_calibration(human_diff, metric_diff, weights)
    human_sign = np.sign(human_diff)
    tied = np.abs(metric_diff) <= epsilon
    agree = np.where(tied, human_sign == 0, human_sign == np.sign(metric_diff))
    return weights * agree


def _pairs_of(human, items, keep):
    """`(one, other, weights, human_diff)` of the pairs of kept responses to the same item."""
    one, other, group = pairs_within_groups(np.asarray(items)[keep])
    one, other = keep[one], keep[other]
    _, groups = np.unique(group, return_inverse=True)
    sizes = np.bincount(groups)
    weights = 1.0 / (sizes[groups] * sizes.size)  # every item weighs the same
    return one, other, weights, human[one] - human[other]


def acc_eq_test(human, first, second, items, *, k, seed, cache=None):
    """Pairs-permutation test that `first` (the better by acc*_eq) beats `second` (not yet drawn).
    Tests on the same responses share the pairs and each metric's credits through `cache`."""
    keep = np.flatnonzero(np.isfinite(human) & np.isfinite(first) & np.isfinite(second))
    mask = keep.tobytes()
    one, other, weights, human_diff = _cached(cache, ("pairs", mask), lambda: _pairs_of(human, items, keep))
    if one.size == 0:
        return PermutationTest(lambda n, rng: np.zeros(n), 1.0, k=0, seed=seed)

    def credits(values):
        return _cached(
            cache,
            ("credits", mask, values.tobytes()),
            lambda: acc_eq_credits(human_diff, values[one] - values[other], weights),
        )

    gap = credits(first) - credits(second)

    total = gap.sum()

    def draw_block(n, rng):
        swapped = swap_bits(rng, n, gap.size)  # 1: the pair's verdicts swapped, its sign flipped
        return total - 2.0 * (swapped @ gap)

    # Random bits, not multiply-adds, are an acc*_eq draw's work: about a hundred multiply-adds a pair.
    return PermutationTest(draw_block, total, k=k, seed=seed, cost=100.0 * gap.size)


def _acc_eq_of(human, items):
    """A metric's acc*_eq grouped by item (`pairwise_accuracy.utterance_pairwise_accuracy`'s statistic)."""
    first, second, group = pairs_within_groups(items)
    keep = np.isfinite(human[first]) & np.isfinite(human[second])
    first, second, group = first[keep], second[keep], group[keep]
    human_diff = human[first] - human[second]

    def acc_eq(values):
        defined = np.isfinite(values[first]) & np.isfinite(values[second])
        if not defined.any():
            return None
        _, groups = np.unique(group[defined], return_inverse=True)
        sizes = np.bincount(groups)
        weights = 1.0 / (sizes[groups] * sizes.size)
        return tie_calibration(human_diff[defined], (values[first] - values[second])[defined], weights)[0]

    return acc_eq


def wmt_ranking_with_tests(
    human, metrics, systems, items, *, n_perm=MAX_PERMUTATIONS, seed=0, alpha=0.05, budget=RANKING_BUDGET
):
    """`(rows, tests)`: every metric's SPA and acc*_eq, its cluster rank under each and their
    average (best first); `tests` gives each pair's test: statistic, better, worse, p, permutations
    used, and whether it settled (False: the budget ended it first; its p is from fewer draws).
    Long arrays: `human` and each of `metrics` give one score per response, `systems` and `items`
    say whose response to which item it is."""
    human = np.asarray(human, dtype=float)
    systems, items = np.asarray(systems), np.asarray(items)
    human_matrix = score_matrix(human, systems, items)[0]
    signs = permutation_signs(human_matrix.shape[1])
    columns = {name: np.asarray(values, dtype=float) for name, values in metrics.items()}
    acc_of = _acc_eq_of(human, items)
    scores = {
        "spa": {
            name: soft_pairwise_accuracy(human_matrix, score_matrix(values, systems, items)[0], signs=signs)["spa"]
            for name, values in columns.items()
        },
        "acc_eq": {name: acc_of(values) for name, values in columns.items()},
    }
    k = min(n_perm, MAX_PERMUTATIONS)
    planned, cache = [], {}
    for label, statistic in scores.items():
        for one, other in combinations(sorted(n for n in statistic if statistic[n] is not None), 2):
            better, worse = (one, other) if statistic[one] >= statistic[other] else (other, one)
            if label == "spa":
                test = spa_test(human, columns[better], columns[worse], systems, items, k=k, seed=seed, cache=cache)
            else:
                test = acc_eq_test(human, columns[better], columns[worse], items, k=k, seed=seed, cache=cache)
            planned.append((label, better, worse, test))
    run_tests([test for *_, test in planned], budget=budget)
    tests = [
        {"statistic": label, "a": better, "b": worse, "p": test.p, "permutations": test.used, "settled": test.settled}
        for label, better, worse, test in planned
    ]
    clusters = {
        label: significance_clusters(scores[label], [t for t in tests if t["statistic"] == label], alpha=alpha)
        for label in scores
    }
    rows = []
    for name in columns:
        ranks = [clusters[label].get(name) for label in scores]
        rows.append(
            {
                "metric": name,
                "spa": scores["spa"][name],
                "spa_rank": clusters["spa"].get(name),
                "acc_eq": scores["acc_eq"][name],
                "acc_eq_rank": clusters["acc_eq"].get(name),
                "average_rank": float(np.mean(ranks)) if None not in ranks else None,
            }
        )
    rows.sort(key=lambda row: (row["average_rank"] is None, row["average_rank"] or 0.0, row["metric"]))
    return rows, tests


def wmt_ranking(human, metrics, systems, items, *, n_perm=MAX_PERMUTATIONS, seed=0, alpha=0.05, budget=RANKING_BUDGET):
    return wmt_ranking_with_tests(human, metrics, systems, items, n_perm=n_perm, seed=seed, alpha=alpha, budget=budget)[
        0
    ]
