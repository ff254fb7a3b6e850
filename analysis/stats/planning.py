"""Precision planning: how many more rated responses (and ratings per response) a study needs.

Two questions, both answered from the study's own variance:
  * width: how many responses for a target 95% CI width on a metric's correlation with humans;
  * separation: how many to tell the top two metrics apart at p < 0.05 (Williams' test).

Ratings per response matter because the human side of the correlation is a mean of m ratings:
its reliability is rel(m) = s_b / (s_b + s_w / m) (s_w: variance between ratings of one response,
s_b: variance of the responses' true scores; a one-way random-effects decomposition), and a
correlation with a noisy mean is attenuated by sqrt(rel(m)) (Spearman 1904). So with m' ratings
the expected correlation is r * sqrt(rel(m') / rel(m)).

The CI width at n responses is Fisher's z width, scaled by the ratio of the observed bootstrap
width to Fisher's width at the current n (the "design effect" of this study's data, which a
normal-theory formula does not know); the separation uses Williams' t at the expected r's.
"""

import math

import numpy as np

from analysis.stats.correlation import williams_test

MAX_RESPONSES = 10_000_000
Z95 = 1.959963984540054


def variance_components(response_codes, scores):
    """(s_b, s_w, mean ratings per response) from one row per rating.

    s_w is the pooled within-response variance (responses with >= 2 ratings); s_b the variance of
    the response means minus the part the rating noise explains, floored at 0.
    """
    codes = np.asarray(response_codes)
    scores = np.asarray(scores, dtype=float)
    _, codes = np.unique(codes, return_inverse=True)
    counts = np.bincount(codes).astype(float)
    sums = np.bincount(codes, weights=scores)
    means = sums / counts
    squares = np.bincount(codes, weights=(scores - means[codes]) ** 2)
    repeated = counts >= 2
    dof = (counts[repeated] - 1).sum()
    s_w = float(squares[repeated].sum() / dof) if dof > 0 else 0.0
    s_b = max(float(means.var(ddof=1)) - s_w * float(np.mean(1 / counts)), 0.0) if means.size > 1 else 0.0
    return s_b, s_w, float(counts.mean()) if counts.size else 0.0


def reliability(s_b, s_w, m):
    if s_b <= 0:
        return 0.0
    return s_b / (s_b + s_w / max(m, 1e-9))


def expected_r(r, s_b, s_w, m_now, m_new):
    """The correlation expected with m_new ratings per response instead of m_now."""
    now = reliability(s_b, s_w, m_now)
    if now <= 0:
        return r
    return float(np.clip(r * math.sqrt(reliability(s_b, s_w, m_new) / now), -0.999, 0.999))


def fisher_width(r, n):
    if n <= 3:
        return math.inf
    z = math.atanh(max(min(r, 0.999999), -0.999999))
    spread = Z95 / math.sqrt(n - 3)
    return math.tanh(z + spread) - math.tanh(z - spread)


def _smallest_n(ok, low=4):
    """The smallest n in [low, MAX_RESPONSES] with ok(n) (ok is monotone), or None."""
    if not ok(MAX_RESPONSES):
        return None
    high = MAX_RESPONSES
    while low < high:
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle + 1
    return low


def responses_for_width(r, target, *, design_effect=1.0):
    return _smallest_n(lambda n: design_effect * fisher_width(r, n) <= target)


def responses_to_separate(r_a, r_b, r_ab, *, alpha=0.05):
    """Smallest n where Williams' one-sided p that a beats b is below alpha, at these r's."""
    if r_a is None or r_b is None or r_a <= r_b:
        return None

    def significant(n):
        _, p, _ = williams_test(r_a, r_b, r_ab, n)
        return p is not None and p < alpha

    return _smallest_n(significant)


def plan(*, r, ci_width, n, s_b, s_w, m_now, target_width, ratings_options, top_two=None):
    """Every option (ratings per response -> responses needed) for both questions.

    top_two: (r_a, r_b, r_ab) of the two best metrics at the current ratings, or None.
    """
    design_effect = ci_width / fisher_width(r, n) if ci_width and n > 3 and math.isfinite(fisher_width(r, n)) else 1.0
    options = []
    for m in ratings_options:
        expected = expected_r(r, s_b, s_w, m_now, m)
        row = {
            "ratings_per_response": m,
            "reliability": reliability(s_b, s_w, m),
            "expected_r": expected,
            "responses_for_width": responses_for_width(expected, target_width, design_effect=design_effect),
            "responses_to_separate": None,
        }
        if top_two is not None:
            factor = expected / r if r else 1.0
            row["responses_to_separate"] = responses_to_separate(top_two[0] * factor, top_two[1] * factor, top_two[2])
        options.append(row)
    return {"design_effect": design_effect, "options": options, "reliability_now": reliability(s_b, s_w, m_now)}


def williams_p_now(r_a, r_b, r_ab, n):
    _, p, _ = williams_test(r_a, r_b, r_ab, n)
    return p
