"""Paired permutation tests between metrics, and significance clusters (the headline ranking).

For two metrics a and b scored on the same responses, H0 says they correlate equally well with
the human score. Under H0 the two metrics' scores of a response are exchangeable, so each
permutation swaps a's and b's score on a random half of the responses and recomputes
r(h, a') - r(h, b') (Deutsch, Dror & Roth 2021; the WMT metrics task). The metrics are first
standardised on their shared responses (mean 0, sd 1), as in that paper, so a swap exchanges
comparable numbers; Pearson's r is unchanged by it.

Vectorised: with h, a, b standardised and d = b - a, a swap matrix S (1 where swapped) gives
    mean(h a') = mean(h a) + S @ (d h) / n      mean(a') = S @ d / n
    mean(a'^2) = 1 + S @ (b^2 - a^2) / n        and the mirror images for b',
so the matrix product S @ [d h, b^2 - a^2, d] yields every permutation's correlations.
All pairs share the swap matrix (drawn once from a seeded generator); pairs are tested on the
responses both metrics score.
"""

from itertools import combinations

import numpy as np

BLOCK_ELEMENTS = 2_000_000  # swap-matrix entries per block: 16 MB of float64


def _standardise(values):
    values = values - values.mean()
    scale = values.std()
    return values / scale if scale > 0 else values


def _metric_columns(human, values, mask):
    """[h m, m^2, m] of one metric standardised on `mask` (zero outside it), and r(h, m)."""
    h, m = _standardise(human[mask]), _standardise(values[mask])
    columns = np.zeros((human.size, 3))
    columns[mask] = np.column_stack([h * m, m * m, m])
    return columns, float(h @ m / mask.sum())


def swap_matrix(rng, rows, n):
    """(rows, n) floats, 1.0 where a response's two scores are swapped (each with probability 1/2).

    One random bit per entry (the generator's bytes, unpacked): ten times cheaper than a float each.
    """
    size = rows * n
    bits = np.unpackbits(np.frombuffer(rng.bytes((size + 7) // 8), dtype=np.uint8), count=size)
    return bits.reshape(rows, n).astype(float)


def permutation_tests(human, metrics, *, n_perm=1000, seed=0):
    """One row per pair of metrics, named so that metric a has the higher r on their shared responses.

    p: one-sided, the share of permutations (counting the observed one) whose difference is at
    least the observed one; p_two_sided likewise for |difference|.
    """
    human = np.asarray(human, dtype=float)
    names = sorted(metrics)
    vectors = {name: np.asarray(metrics[name], dtype=float) for name in names}
    pairs, first_columns, second_columns, observed = [], [], [], []
    # Pair columns are differences of per-metric columns, S @ (b - a) = S @ b - S @ a, so metrics
    # that share their scored responses need one set of columns each, not one per pair: for 15
    # metrics 45 columns instead of 315. Pairs whose metrics score different responses get their own.
    columns, index = [], {}

    def column_of(name, mask):
        key = (name, mask.tobytes())
        if key not in index:
            block, r = _metric_columns(human, vectors[name], mask)
            index[key] = (len(columns), r)
            columns.append(block)
        return index[key]

    for first, second in combinations(names, 2):
        mask = np.isfinite(human) & np.isfinite(vectors[first]) & np.isfinite(vectors[second])
        if mask.sum() <= 3 or min(np.ptp(v[mask]) for v in (human, vectors[first], vectors[second])) == 0:
            continue
        (i, r_first), (j, r_second) = column_of(first, mask), column_of(second, mask)
        pairs.append((first, second, int(mask.sum())))
        first_columns.append(i)
        second_columns.append(j)
        observed.append((r_first, r_second))
    if not pairs:
        return []
    design = np.hstack(columns)  # (N, 3 * distinct (metric, responses) sets)
    first_columns, second_columns = np.array(first_columns), np.array(second_columns)
    n_items = np.array([n for _, _, n in pairs], dtype=float)[:, None]
    r_a = np.array([r for r, _ in observed])
    r_b = np.array([r for _, r in observed])
    delta = r_a - r_b
    at_least = np.zeros(len(pairs))
    at_most = np.zeros(len(pairs))
    at_least_abs = np.zeros(len(pairs))
    rng = np.random.default_rng(seed)
    rows_per_block = max(1, BLOCK_ELEMENTS // human.size)
    done = 0
    while done < n_perm:
        size = min(rows_per_block, n_perm - done)
        per_metric = (swap_matrix(rng, size, human.size) @ design).reshape(size, len(columns), 3)
        # S @ (d h), S @ (b^2 - a^2), S @ d for every pair, with d = b - a.
        sums = (per_metric[:, second_columns] - per_metric[:, first_columns]) / n_items
        cross, squares, shift = sums[:, :, 0], sums[:, :, 1], sums[:, :, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            r_first = (r_a + cross) / np.sqrt(1 + squares - shift**2)
            r_second = (r_b - cross) / np.sqrt(1 - squares - shift**2)
        permuted = r_first - r_second
        tolerance = 1e-12  # the identity permutation must count as "at least as large"
        at_least += (permuted >= delta - tolerance).sum(axis=0)
        at_most += (permuted <= delta + tolerance).sum(axis=0)
        at_least_abs += (np.abs(permuted) >= np.abs(delta) - tolerance).sum(axis=0)
        done += size
    rows = []
    for index, (first, second, n) in enumerate(pairs):
        flip = delta[index] < 0
        # Naming a the better metric: when the second one is, its one-sided count is the lower tail.
        tail = at_most[index] if flip else at_least[index]
        rows.append(
            {
                "a": second if flip else first,
                "b": first if flip else second,
                "r_a": float(r_b[index] if flip else r_a[index]),
                "r_b": float(r_a[index] if flip else r_b[index]),
                "delta": float(abs(delta[index])),
                "n": n,
                "p": float((1 + tail) / (1 + n_perm)),
                "p_two_sided": float((1 + at_least_abs[index]) / (1 + n_perm)),
            }
        )
    return rows


def significance_clusters(correlations, tests, *, alpha=0.05):
    """Metrics ranked by correlation and grouped: metric -> rank of its cluster (1 = best).

    Walking down the ranking, a metric opens a new cluster when some metric of the current
    cluster is significantly better than it (one-sided p < alpha in `tests`); otherwise it joins
    the current cluster. So every cluster is a run of metrics that no member of the run beats
    significantly, and the ranks say which differences the data can support. Metrics without a
    correlation are left out.
    """
    p_better = {(row["a"], row["b"]): row["p"] for row in tests}
    ranked = sorted((name for name, r in correlations.items() if r is not None), key=lambda n: -correlations[n])
    clusters = {}
    start, rank = 0, 1
    for index, name in enumerate(ranked):
        beaten = any(p_better.get((other, name), 1.0) < alpha for other in ranked[start:index])
        if beaten:
            start, rank = index, rank + 1
        clusters[name] = rank
    return clusters
