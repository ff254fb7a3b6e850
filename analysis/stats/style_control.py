"""Win rates and Bradley-Terry strengths with the responses' length and formatting held fixed.
Pure: numpy and scipy.optimize, no Django.

Length-controlled win rate against a baseline (AlpacaEval 2, Dubois et al. 2024): judges prefer
longer answers, so a system can "win" by being verbose. For the judgements of one system against
the baseline, a logistic model
    P(system preferred) = sigmoid(theta + phi * tanh(delta_len / sd(delta_len)))
is fitted (delta_len = system length - baseline length; ties count as half a preference), with an
L2 penalty on phi whose strength is chosen by K-fold cross-validation of the held-out log loss;
the length-controlled win rate is sigmoid(theta), the predicted win rate had both answers been
equally long. (AlpacaEval's GLM also has an instruction-difficulty term fitted over all systems;
with one study's systems we leave it out.)

Style-controlled Bradley-Terry (Chatbot Arena's "style control", 2024): the vote model gets, beside
s_a - s_b, covariates for the two responses' styles, each the normalised difference
(f_a - f_b) / (f_a + f_b) (0 when both are 0) standardised over votes; the strengths fitted with
those covariates are the systems' strengths "with style held equal", and the covariates'
coefficients say how much each style feature sways the votes.
"""

import re

import numpy as np
from scipy import optimize, special  # special.expit: the logistic without exp's overflow warning

from analysis.stats.arena import intervals
from analysis.stats.pairwise import RIDGE

PENALTIES = (0.0, 0.01, 0.1, 1.0, 10.0, 100.0)  # L2 strengths tried by cross-validation
FOLDS = 5
NOTE_GAP = 0.05  # a controlled figure this far from the raw one gets a note


def _logistic_fit(features, target, weights, penalty, penalised):
    """Coefficients maximising sum w [t log p + (1 - t) log(1 - p)] - penalty * sum(beta[penalised]^2)."""

    def loss(beta):
        logits = features @ beta
        value = np.sum(weights * (np.logaddexp(0.0, logits) - target * logits)) + penalty * np.sum(beta[penalised] ** 2)
        residual = weights * (special.expit(logits) - target)
        gradient = features.T @ residual
        gradient[penalised] += 2 * penalty * beta[penalised]
        return value, gradient

    # A small training fold can be separable (every preference the same): its MLE is infinite, so
    # the iterations are capped; the held-out loss then simply scores that fold badly.
    start = np.zeros(features.shape[1])
    return optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 200}).x


def _log_loss(features, target, beta):
    logits = features @ beta
    return float(np.mean(np.logaddexp(0.0, logits) - target * logits))


def length_controlled_win_rate(preference, system_length, baseline_length, *, folds=FOLDS, seed=0):
    """{"win_rate", "lc_win_rate", "phi", "penalty", "n", "note"} of one system against the baseline.

    `preference`: 1 = the system's answer preferred, 0 = the baseline's, 0.5 = tie.
    """
    target = np.asarray(preference, dtype=float)
    gap = np.asarray(system_length, dtype=float) - np.asarray(baseline_length, dtype=float)
    keep = np.isfinite(target) & np.isfinite(gap)
    target, gap = target[keep], gap[keep]
    n = int(target.size)
    unfitted = {"win_rate": None, "lc_win_rate": None, "phi": None, "penalty": None, "n": n, "note": None}
    if target.size == 0:
        return unfitted
    raw = float(target.mean())
    if gap.min() > 0 or gap.max() < 0:
        # The controlled rate is the model's prediction at equal length. When every answer is longer
        # (or every one shorter) than the baseline's, that point lies outside the data and the fit
        # extrapolates: one win in 24, every answer shorter, gave "100%". Say so rather than guess.
        side = "longer" if gap.min() > 0 else "shorter"
        note = (
            f"no length-controlled rate: every answer was {side} than the baseline's, "
            "so equal length lies outside the data"
        )
        return {**unfitted, "win_rate": raw, "note": note}
    spread = gap.std()
    features = np.column_stack([np.ones(target.size), np.tanh(gap / spread) if spread > 0 else np.zeros(target.size)])
    penalised = np.array([False, True])
    weights = np.ones(target.size)
    fold = np.random.default_rng(seed).permutation(target.size) % max(2, min(folds, target.size))
    losses = []
    for penalty in PENALTIES:
        held_out = []
        for k in np.unique(fold):
            train = fold != k
            beta = _logistic_fit(features[train], target[train], weights[train], penalty, penalised)
            held_out.append(_log_loss(features[~train], target[~train], beta))
        losses.append(np.mean(held_out))
    penalty = PENALTIES[int(np.argmin(losses))]
    theta, phi = _logistic_fit(features, target, weights, penalty, penalised)
    controlled = float(special.expit(theta))
    note = None
    if abs(controlled - raw) >= NOTE_GAP:
        note = (
            f"length-controlled win rate {controlled:.0%} differs from the raw {raw:.0%}: "
            "the judge's length preference moves it"
        )
    return {
        "win_rate": raw,
        "lc_win_rate": controlled,
        "phi": float(phi),
        "penalty": penalty,
        "n": n,
        "note": note,
    }


_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE)


def style_features(text):
    """The Arena's style features of a response: length (words), markdown headers, bold spans,
    list items."""
    return {
        "length": len(text.split()),
        "headers": len(_HEADER.findall(text)),
        "bold": len(_BOLD.findall(text)),
        "lists": len(_LIST.findall(text)),
    }


def style_covariates(features_a, features_b):
    """`(names, Z)`: per feature the normalised difference (f_a - f_b) / (f_a + f_b), standardised
    over votes (a constant column stays 0). `features_*`: {name: array per vote}."""
    names = sorted(features_a)
    columns = []
    for name in names:
        fa, fb = np.asarray(features_a[name], dtype=float), np.asarray(features_b[name], dtype=float)
        total = fa + fb
        diff = np.divide(fa - fb, total, out=np.zeros_like(total), where=total != 0)
        spread = diff.std()
        columns.append((diff - diff.mean()) / spread if spread > 0 else np.zeros_like(diff))
    return names, np.column_stack(columns) if columns else np.zeros((0, 0))


def _style_fit(votes, covariates, n_systems, weights, start=None):
    """Strengths (mean 0) and style coefficients maximising the weighted vote likelihood."""
    a, b, outcome = votes
    n_style = covariates.shape[1]

    def loss(params):
        strengths, style = params[:n_systems], params[n_systems:]
        logits = strengths[a] - strengths[b] + covariates @ style
        value = np.sum(weights * (np.logaddexp(0.0, logits) - outcome * logits)) + RIDGE * np.sum(strengths**2)
        residual = weights * (special.expit(logits) - outcome)
        gradient = np.concatenate(
            [
                np.bincount(a, residual, n_systems) - np.bincount(b, residual, n_systems) + 2 * RIDGE * strengths,
                covariates.T @ residual,
            ]
        )
        return value, gradient

    x0 = np.zeros(n_systems + n_style) if start is None else start
    params = optimize.minimize(loss, x0, jac=True, method="L-BFGS-B", options={"maxiter": 1000}).x
    strengths = params[:n_systems] - params[:n_systems].mean()
    return np.concatenate([strengths, params[n_systems:]])


def rank_changes(raw, controlled):
    """{system index: (raw rank, controlled rank)} of the systems whose rank (1 = strongest) moves
    when style is controlled: the note the report shows beside the two rankings."""
    raw_rank = np.empty(len(raw), dtype=int)
    raw_rank[np.argsort(-np.asarray(raw), kind="stable")] = np.arange(1, len(raw) + 1)
    controlled_rank = np.empty(len(controlled), dtype=int)
    controlled_rank[np.argsort(-np.asarray(controlled), kind="stable")] = np.arange(1, len(controlled) + 1)
    return {int(i): (int(raw_rank[i]), int(controlled_rank[i])) for i in np.flatnonzero(raw_rank != controlled_rank)}


def style_controlled_strengths(votes, n_systems, features_a, features_b, *, n_boot=100, seed=0):
    """{"strengths", "raw_strengths", "style": {feature: coefficient}, "moved", "ci_low", "ci_high"}.

    `votes`: `(a, b, outcome)` arrays as in `analysis.stats.pairwise`; `features_*`: {name: array
    per vote} of the responses shown as a and as b (see `style_features`).

    Intervals: percentile bootstrap over votes (multinomial weights, warm-started fits); `n_boot`
    = 0 skips them. Raw strengths are the same fit without covariates.
    """
    a, b, outcome = votes
    votes = (np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64), np.asarray(outcome, dtype=float))
    a = votes[0]
    names, covariates = style_covariates(features_a, features_b)
    ones = np.ones(a.size)
    raw = _style_fit(votes, np.zeros((a.size, 0)), n_systems, ones)
    point = _style_fit(votes, covariates, n_systems, ones)
    result = {
        "strengths": point[:n_systems],
        "raw_strengths": raw,
        "style": dict(zip(names, point[n_systems:].tolist(), strict=True)),
        "moved": rank_changes(raw, point[:n_systems]),
        "ci_low": None,
        "ci_high": None,
    }
    if n_boot:
        rng = np.random.default_rng(seed)
        uniform = np.full(a.size, 1.0 / a.size)
        samples = np.empty((n_boot, n_systems))
        for k in range(n_boot):  # one resample's weights at a time: n_boot x n_votes would not fit
            weights = rng.multinomial(a.size, uniform).astype(float)
            samples[k] = _style_fit(votes, covariates, n_systems, weights, point)[:n_systems]
        result["ci_low"], result["ci_high"] = intervals(samples)
    return result
