"""The report's tables computed from aligned vectors (one entry per response)."""

import warnings

import numpy as np

from analysis.stats.bootboth import boot_both
from analysis.stats.bootstrap import bootstrap_correlations, resample_counts
from analysis.stats.correlation import correlate
from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
stats = lazy_module("scipy.stats")

LENGTH_THRESHOLD = 6  # |Δwords| <= 6 vs > 6, as Liu et al. (2016) Table 5


def _float(value):
    value = float(value)
    return None if not np.isfinite(value) else value


def _ci_fields(prefix, interval):
    return {f"{prefix}_ci_low": _float(interval[0]), f"{prefix}_ci_high": _float(interval[1])}


def utterance_level(human, metrics, *, n_boot=1000, seed=0):
    """One row per metric: r, rho, p-values, n and 95% bootstrap CIs against the human score.

    Each metric uses the items where it and the human score are defined. Metrics defined on the
    same items share one set of resamples, computed in one vectorised pass.
    """
    human = np.asarray(human, dtype=float)
    rows = {}
    groups = {}
    for name, column in metrics.items():
        values = np.asarray(column, dtype=float)
        mask = np.isfinite(human) & np.isfinite(values)
        groups.setdefault(mask.tobytes(), (mask, []))[1].append(name)
        rows[name] = {"metric": name, **correlate(human[mask], values[mask])}
    for mask, names in groups.values():
        usable = [name for name in names if rows[name]["pearson"] is not None]
        intervals = {"pearson_ci": np.full((len(usable), 2), np.nan), "spearman_ci": np.full((len(usable), 2), np.nan)}
        if usable and n_boot > 0:
            ys = np.column_stack([np.asarray(metrics[name], dtype=float)[mask] for name in usable])
            intervals = bootstrap_correlations(human[mask], ys, n_boot=n_boot, seed=seed)
        for name in names:
            rows[name].update(_ci_fields("pearson", (np.nan, np.nan)) | _ci_fields("spearman", (np.nan, np.nan)))
        for j, name in enumerate(usable):
            rows[name].update(_ci_fields("pearson", intervals["pearson_ci"][j]))
            rows[name].update(_ci_fields("spearman", intervals["spearman_ci"][j]))
    return [rows[name] for name in metrics]


def _group_means_bootstrap(values, finite, positions, n_boot, rng):
    """(B, k) resampled means of each column within one system (NaN entries left out)."""
    n = positions.size
    block = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    parts = []
    done = 0
    sub_values, sub_finite = values[positions], finite[positions]
    while done < n_boot:
        size = min(block, n_boot - done)
        counts = resample_counts(rng.integers(0, n, size=(size, n)))
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append((counts @ sub_values) / (counts @ sub_finite))
        done += size
    return np.vstack(parts)


def _interval(samples, level):
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return (np.nan, np.nan)
    alpha = (1 - level) / 2
    return tuple(np.quantile(samples, [alpha, 1 - alpha]))


def system_level(human, metrics, systems, *, contexts=None, n_boot=1000, seed=0, level=0.95):
    """Per-system means (human and each metric) with CIs, and the correlation across systems.

    A system's mean has a percentile-bootstrap CI that resamples that system's responses (the
    responses are the sample of what the system produces). The correlation across systems has
    Boot-Both CIs (Deutsch et al. 2021: systems and contexts resampled together, see
    `bootboth`) with the p-value read off the same resamples (`*_p_bootboth`), so the two agree;
    `*_p` stays the classical test with the systems as the sample. `contexts` labels each
    response's context (None: every response its own).
    """
    human = np.asarray(human, dtype=float)
    systems = np.asarray(systems)
    names = list(metrics)
    columns = np.column_stack([human] + [np.asarray(metrics[m], dtype=float) for m in names])
    finite = np.isfinite(columns)
    values = np.where(finite, columns, 0.0)
    finite = finite.astype(float)
    rng = np.random.default_rng(seed)
    labels = sorted(set(systems.tolist()))
    means = np.full((len(labels), len(names) + 1), np.nan)
    per_system = []
    for g, label in enumerate(labels):
        positions = np.flatnonzero(systems == label)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[g] = values[positions].sum(axis=0) / finite[positions].sum(axis=0)
        boot = _group_means_bootstrap(values, finite, positions, n_boot, rng) if n_boot > 0 else None
        row = {"system": str(label), "n": int(positions.size), "human_mean": _float(means[g, 0])}
        low, high = _interval(boot[:, 0], level) if boot is not None else (np.nan, np.nan)
        row.update(human_ci_low=_float(low), human_ci_high=_float(high), metrics={})
        for j, name in enumerate(names, start=1):
            low, high = _interval(boot[:, j], level) if boot is not None else (np.nan, np.nan)
            row["metrics"][name] = {"mean": _float(means[g, j]), "ci_low": _float(low), "ci_high": _float(high)}
        per_system.append(row)
    contexts = np.arange(human.size) if contexts is None else np.asarray(contexts)
    intervals = boot_both(human, metrics, systems, contexts, n_boot=n_boot, seed=seed, level=level)
    correlations = []
    for j, name in enumerate(names, start=1):
        defined = np.isfinite(means[:, 0]) & np.isfinite(means[:, j])
        row = {"metric": name, **correlate(means[defined, 0], means[defined, j])}
        for kind, (low, high, p) in intervals[name].items():
            defined_here = row[kind] is not None
            row[f"{kind}_ci_low"], row[f"{kind}_ci_high"] = (low, high) if defined_here else (None, None)
            row[f"{kind}_p_bootboth"] = p if defined_here else None
        correlations.append(row)
    return {"correlations": correlations, "systems": per_system}


def length_bias(delta_words, human, metrics, *, threshold=LENGTH_THRESHOLD):
    """Mean score of humans and each metric for |Δwords| <= threshold vs > threshold.

    Δwords is the difference in word count between response and reference. Two tests of the
    difference between the groups: Welch's t-test (unequal variances; the group sizes are very
    unequal) and the Mann-Whitney U test (no normality assumption: human means are ordinal and
    overlap metrics are bounded and skewed). Both two-sided.
    """
    delta = np.abs(np.asarray(delta_words, dtype=float))
    short = delta <= threshold
    long_ = delta > threshold
    rows = []
    for name, column in [("human", human), *metrics.items()]:
        values = np.asarray(column, dtype=float)
        a = values[short & np.isfinite(values)]
        b = values[long_ & np.isfinite(values)]
        row = {
            "measure": name,
            "n_short": int(a.size),
            "n_long": int(b.size),
            "mean_short": _float(a.mean()) if a.size else None,
            "mean_long": _float(b.mean()) if b.size else None,
            "welch_t": None,
            "welch_p": None,
            "mannwhitney_u": None,
            "mannwhitney_p": None,
        }
        if a.size >= 2 and b.size >= 2 and (np.ptp(a) > 0 or np.ptp(b) > 0):
            welch = _welch(a, b)
            mann = stats.mannwhitneyu(a, b, alternative="two-sided")
            row.update(
                welch_t=_float(welch.statistic),
                welch_p=_float(welch.pvalue),
                mannwhitney_u=_float(mann.statistic),
                mannwhitney_p=_float(mann.pvalue),
            )
        rows.append(row)
    return {"threshold": threshold, "rows": rows}


def _welch(a, b):
    """Welch's t-test of two groups, at least one of which varies.

    A group whose values are all equal (every short reply rated 4) has a variance of exactly 0,
    which the test handles; scipy still warns of "precision loss", a warning meant for values that
    are nearly but not exactly equal, so for such a group, and only then, it is not passed on.
    """
    if np.ptp(a) > 0 and np.ptp(b) > 0:
        return stats.ttest_ind(a, b, equal_var=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        return stats.ttest_ind(a, b, equal_var=False)


def stopword_table(human, metrics, pairs):
    """Correlation with humans of each metric with and without stopwords/punctuation.

    `pairs` lists (metric, variant without stopwords); Liu et al. (2016) Table 4.
    """
    human = np.asarray(human, dtype=float)
    rows = []
    for base, variant in pairs:
        row = {"metric": base, "variant": variant}
        for label, name in (("with", base), ("without", variant)):
            values = np.asarray(metrics[name], dtype=float)
            mask = np.isfinite(human) & np.isfinite(values)
            result = correlate(human[mask], values[mask])
            row[f"pearson_{label}"] = result["pearson"]
            row[f"pearson_p_{label}"] = result["pearson_p"]
            row[f"spearman_{label}"] = result["spearman"]
            row[f"spearman_p_{label}"] = result["spearman_p"]
            row[f"mean_{label}"] = _float(values[mask].mean()) if mask.any() else None
            row[f"n_{label}"] = result["n"]
        rows.append(row)
    return rows


def normalise_to_human(values, human, *, low=1.0, high=5.0):
    """Rescale a metric to the human scores' mean and standard deviation, clipped to [low, high].

    Lowe et al. (2017) supplement, Table 7: makes "scored <= 2" comparable across metrics.
    Computed on the items where both are defined; NaN stays NaN.
    """
    values = np.asarray(values, dtype=float)
    human = np.asarray(human, dtype=float)
    mask = np.isfinite(values) & np.isfinite(human)
    out = np.full(values.shape, np.nan)
    if mask.sum() < 2:
        return out
    spread = values[mask].std()
    z = (values - values[mask].mean()) / spread if spread > 0 else np.zeros_like(values)
    out[np.isfinite(values)] = np.clip(z * human[mask].std() + human[mask].mean(), low, high)[np.isfinite(values)]
    return out


def failure_analysis(
    human, metrics, *, overlap=("bleu2", "rouge_l"), learned=None, good=4.0, low=2.0, high=4.0, n_examples=5, seed=0
):
    """Good responses (human >= good) that word-overlap metrics score <= low after normalisation,
    and how many of those the learned metric scores > high. Example item indices are drawn at
    random with a fixed seed (never hand-picked). Metrics absent from `metrics` are skipped.
    """
    human = np.asarray(human, dtype=float)
    rng = np.random.default_rng(seed)
    normalised = {name: normalise_to_human(metrics[name], human) for name in metrics}
    is_good = human >= good
    learned_high = (normalised[learned] > high) if learned in normalised else None
    used = [name for name in overlap if name in normalised]
    cases = [(name, normalised[name] <= low) for name in used]
    if len(used) > 1:
        cases.append((" & ".join(used), np.logical_and.reduce([normalised[name] <= low for name in used])))

    def sample(mask):
        indices = np.flatnonzero(mask)
        chosen = rng.choice(indices, size=min(n_examples, indices.size), replace=False) if indices.size else []
        return sorted(int(i) for i in chosen)

    rows = []
    for name, scored_low in cases:
        failed = is_good & scored_low
        row = {"metric": name, "n_scored_low": int(failed.sum()), "examples": sample(failed)}
        if learned_high is not None:
            rescued = failed & learned_high
            row.update(n_learned_high=int(rescued.sum()), rescued_examples=sample(rescued))
        rows.append(row)
    return {
        "n_good": int(is_good.sum()),
        "good_threshold": good,
        "low_threshold": low,
        "high_threshold": high,
        "learned_metric": learned if learned_high is not None else None,
        "cases": rows,
        "seed": seed,
    }
