"""Cohen's kappa between pairs of annotators, and what the quality rules read from it (pure, no Django).

Input is a sequence of ratings `(annotator, item, score)`; an undefined kappa is `None`, never NaN.
scikit-learn's `cohen_kappa_score` defines the statistic; the vectorised path gives the same values.
"""

import math
from dataclasses import asdict, dataclass
from itertools import combinations, pairwise
from statistics import median

import numpy as np

from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
sklearn = lazy_module("sklearn")  # sklearn.metrics is imported by sklearn's own __getattr__


WEIGHTINGS = {"none": "kappa", "linear": "kappa_linear", "quadratic": "kappa_quadratic"}


@dataclass(frozen=True)
class PairAgreement:
    """Cohen's kappa of two annotators over the items they both rated."""

    a: str
    b: str
    n: int
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    used: bool

    def as_dict(self):
        return asdict(self)


def _by_annotator(ratings, scale):
    allowed = set(scale)
    table = {}
    for annotator, item, score in ratings:
        if score not in allowed:
            # sklearn silently drops labels outside `labels`; a wrong scale must fail loudly instead.
            raise ValueError(f"score {score!r} of annotator {annotator!r} on item {item!r} is not on the scale {scale}")
        table.setdefault(annotator, {})[item] = score
    return table


def cohen_kappas(scores_a, scores_b, *, scale):
    """Unweighted, linear and quadratic Cohen's kappa of two aligned score lists.

    `labels=scale` makes the weights follow the whole scale, also for values neither annotator
    used: a 1-vs-3 disagreement costs the same whether or not anyone ever chose 2. (scikit-learn
    weights by position in `labels`, which for an integer scale such as 1..5 equals the value
    distance.) When both annotators gave one and the same value to every shared item, the
    expected disagreement is zero and kappa is undefined: all three are `None`.
    """
    if len(scores_a) != len(scores_b):
        raise ValueError("score lists must have the same length")
    if not scores_a or len(set(scores_a) | set(scores_b)) == 1:
        return None, None, None
    labels = list(scale)
    return tuple(
        float(sklearn.metrics.cohen_kappa_score(scores_a, scores_b, labels=labels, weights=weights))
        for weights in (None, "linear", "quadratic")
    )


# scikit-learn's `cohen_kappa_score` costs about 3 ms a call (input validation), so a survey of
# 200 annotators (~20,000 pairs, three weightings) would take minutes. Beyond this many pairs
# the kappas come from all pairs' confusion matrices at once, with scikit-learn's formula;
# tests check both paths give the same values.
SKLEARN_MAX_PAIRS = 300


def _weight_matrices(k):
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    return {"kappa": 1.0 - np.eye(k), "kappa_linear": distance, "kappa_quadratic": distance**2}


def _kappas_from_confusions(confusions):
    """Unweighted, linear and quadratic kappa of each (k x k) confusion matrix; NaN when undefined.

    The same definition as `sklearn.metrics.cohen_kappa_score`: with observed counts O and
    expected counts E = outer(row sums, column sums) / n, kappa = 1 - sum(W*O) / sum(W*E).
    """
    n = confusions.sum(axis=(1, 2))
    expected = confusions.sum(axis=2)[:, :, None] * confusions.sum(axis=1)[:, None, :] / n[:, None, None]
    result = {}
    for key, weights in _weight_matrices(confusions.shape[1]).items():
        observed = (weights * confusions).sum(axis=(1, 2))
        chance = (weights * expected).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            result[key] = np.where(chance > 0, 1.0 - observed / np.where(chance > 0, chance, 1.0), np.nan)
    return result


def _shared_pairs(table, annotators):
    """`{(a, b): [(score_a, score_b), ...]}` over items both rated, a before b in `annotators`."""
    rank = {name: i for i, name in enumerate(annotators)}
    per_item = {}
    for annotator, scores in table.items():
        for item, score in scores.items():
            per_item.setdefault(item, []).append((rank[annotator], score))
    shared = {}
    for raters in per_item.values():
        raters.sort()
        for (i, x), (j, y) in combinations(raters, 2):
            shared.setdefault((i, j), []).append((x, y))
    return {(annotators[i], annotators[j]): scores for (i, j), scores in sorted(shared.items())}


def _pair_kappas_vectorised(shared, scale):
    position = {value: i for i, value in enumerate(scale)}
    k = len(scale)
    confusions = np.zeros((len(shared), k, k))
    for index, scores in enumerate(shared.values()):
        for x, y in scores:
            confusions[index, position[x], position[y]] += 1
    values = _kappas_from_confusions(confusions)
    return [
        tuple(None if math.isnan(values[key][index]) else float(values[key][index]) for key in WEIGHTINGS.values())
        for index in range(len(shared))
    ]


def pairwise_agreement(ratings, *, scale, min_overlap=1, engine="auto"):
    """Cohen's kappas for every pair of annotators who share at least one item.

    Pairs with fewer than `min_overlap` shared items are returned with `used=False`: shown, but
    left out of per-annotator means and the median. Pairs whose kappa is undefined are not used
    either. Annotators are ordered by their string form so `a < b`. `engine`: `sklearn` calls
    `cohen_kappas` per pair, `numpy` computes all pairs at once, `auto` picks sklearn for up to
    SKLEARN_MAX_PAIRS pairs.
    """
    table = _by_annotator(ratings, scale)
    annotators = sorted(table, key=str)
    shared = _shared_pairs(table, annotators)
    if engine == "auto":
        engine = "sklearn" if len(shared) <= SKLEARN_MAX_PAIRS else "numpy"
    if engine == "sklearn":
        kappas = [cohen_kappas([x for x, _ in s], [y for _, y in s], scale=scale) for s in shared.values()]
    elif engine == "numpy":
        kappas = _pair_kappas_vectorised(shared, scale)
    else:
        raise ValueError(f"unknown engine {engine!r}")
    return [
        PairAgreement(
            a=str(a),
            b=str(b),
            n=len(scores),
            kappa=kappa,
            kappa_linear=linear,
            kappa_quadratic=quadratic,
            used=len(scores) >= min_overlap and kappa is not None,
        )
        for ((a, b), scores), (kappa, linear, quadratic) in zip(shared.items(), kappas, strict=True)
    ]


def pair_kappa(pair, weighting="none"):
    """The pair's kappa under a survey's weighting setting (`none`, `linear`, `quadratic`)."""
    return getattr(pair, WEIGHTINGS[weighting])


def annotator_kappas(pairs, *, weighting="none"):
    """Mean kappa of each annotator over their used pairs: `{annotator: (mean or None, n_pairs)}`.

    An annotator with no used pair (no partner above the overlap minimum) gets `None`: no
    evidence for or against them.
    """
    values = {}
    for pair in pairs:
        values.setdefault(pair.a, [])
        values.setdefault(pair.b, [])
        if pair.used:
            kappa = pair_kappa(pair, weighting)
            values[pair.a].append(kappa)
            values[pair.b].append(kappa)
    return {name: (float(np.mean(v)) if v else None, len(v)) for name, v in values.items()}


def kappa_matrix(pairs, *, weighting="none"):
    """`(index, kappas, paired)`: annotator -> row (names sorted), and the symmetric matrices of the
    used pairs' kappas and of which pairs are used. Built once, it serves many `consensus_kappas`."""
    names = sorted({pair.a for pair in pairs} | {pair.b for pair in pairs})
    index = {name: i for i, name in enumerate(names)}
    kappas = np.zeros((len(names), len(names)))
    paired = np.zeros((len(names), len(names)))
    for pair in pairs:
        kappa = pair_kappa(pair, weighting)
        if pair.used and kappa is not None:
            i, j = index[pair.a], index[pair.b]
            kappas[i, j] = kappas[j, i] = kappa
            paired[i, j] = paired[j, i] = 1.0
    return index, kappas, paired


def consensus_kappas(pairs, *, threshold, weighting="none", distrusted=frozenset(), matrix=None):
    """Each annotator's mean kappa with the annotators who agree with one another.

    The plain mean (`annotator_kappas`) lets a careless minority drag everyone down: among 12
    simulated raters, 2 choosing at random pulled the 10 careful ones' means below 0.2 and the
    rule excluded all 12. So partners are first narrowed to a consensus: starting from everyone
    not `distrusted` (already excluded by another rule), the annotator with the lowest mean over
    the remaining partners leaves while that mean is below `threshold`. Everyone, inside the
    consensus or not, is then judged by their mean over consensus partners, so someone who left
    early only because of bad partners is judged again against the good ones.

    With fewer than two annotators left there is no consensus to judge against; the mean over all
    trusted partners is used, which is the plain rule when nobody is distrusted. Returns
    `{annotator: (mean or None, n_pairs)}` like `annotator_kappas`. `matrix`: `kappa_matrix(pairs)`
    when the caller already has it (for the same pairs and weighting; it is not modified).
    """
    index, kappas, paired = matrix if matrix is not None else kappa_matrix(pairs, weighting=weighting)
    names = list(index)

    def totals(group):
        return kappas @ group, paired @ group

    def mean(sums, counts):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    trusted = np.array([name not in distrusted for name in names], dtype=float)
    consensus = trusted.copy()
    sums, counts = totals(consensus)
    while threshold is not None:
        means = mean(sums, counts)
        low = np.flatnonzero((consensus > 0) & (means < threshold))  # NaN (no partner) is never low
        if not len(low):
            break
        # The lowest leaves first; ties in name order (argmin takes the first), so reruns agree.
        worst = low[np.argmin(means[low])]
        consensus[worst] = 0.0
        sums, counts = sums - kappas[:, worst], counts - paired[:, worst]  # O(n), no new product
    if consensus.sum() < 2:
        consensus = trusted
    sums, counts = totals(consensus)
    means = mean(sums, counts)
    return {name: (None if counts[i] == 0 else float(means[i]), int(counts[i])) for name, i in index.items()}


def median_kappa(pairs, *, weighting="none", annotators=None):
    """Median of the used pairs' kappas; with `annotators`, only pairs of two of them."""
    values = [
        pair_kappa(p, weighting)
        for p in pairs
        if p.used and (annotators is None or (p.a in annotators and p.b in annotators))
    ]
    return float(median(values)) if values else None


def kappa_histogram(values, *, edges=(-1.0, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0)):
    """Counts of kappas in the bins `[e0, e1), ..., [e_{n-1}, e_n]` (Landis and Koch's bands)."""
    bins = []
    for low, high in pairwise(edges):
        last = high == edges[-1]
        count = sum(1 for v in values if v is not None and low <= v and (v <= high if last else v < high))
        bins.append({"low": low, "high": high, "count": count})
    return bins
