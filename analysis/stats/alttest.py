"""The alternative-annotator test (Calderon, Reichart & Dror, ACL 2025, "alt-test"): can a judge
(an LLM judge or any metric, treated as one more annotator) replace the human annotators of a
study? Pure: numpy and scipy.stats, no Django.

Leave one annotator out at a time. On each item that annotator labelled, score how well the
judge, and how well the left-out human, agree with the *remaining* annotators of that item (the
alignment score S; higher is better):
- `accuracy`: the share of the remaining annotators whose label equals the candidate's
  (categorical labels, and pairwise choices such as "a" / "b" / "tie");
- `neg_mae`: minus the mean absolute difference from the remaining annotators' ratings;
- `neg_rmse`: minus the root mean squared difference (the paper's choice for continuous labels).
The judge "holds its own" on the item when S(judge) >= S(human), the human when S(human) >=
S(judge) (a tie counts for both, as in the paper). With W_f and W_h those indicators over the
annotator's n items, the advantage probabilities are rho_f = mean(W_f) and rho_h = mean(W_h).

Per annotator j the test is one-sided: H0: rho_f <= rho_h - epsilon, against H1: rho_f > rho_h -
epsilon, a paired t-test of d_i = W_h,i - W_f,i against the mean epsilon (`ttest_1samp(d, epsilon,
alternative="less")`). Epsilon is the cost margin that rewards the judge for being cheaper and
faster (the authors' rule of thumb: 0.1 crowd workers, 0.15 skilled annotators, 0.2 experts).
The annotators' p-values are corrected by Benjamini-Yekutieli at q = 0.05 (valid under any
dependence: the tests share items). The winning rate omega is the share of annotators whose H0
is rejected; omega >= 0.5 means the judge may replace an annotator. The average advantage
probability rho (the mean of rho_f over annotators) compares judges with each other.

The paper's minimums: at least 3 annotators (with 2 the test only asks which of the two the judge
resembles) and about 30 items per annotator (for the t-test's normality); below them the result
carries a warning rather than being withheld. (The authors' code instead skips annotators with
fewer than 30 items; `min_items=30` does the same, and names the skipped annotators in a warning.)
With no spread in d the t statistic is -inf or +inf, as scipy computes it: p = 0 or 1.
"""

import numpy as np
from scipy import stats

EPSILON = {"crowd": 0.1, "skilled": 0.15, "experts": 0.2}
Q = 0.05
MIN_ANNOTATORS = 3
MIN_ITEMS = 30
SCORINGS = ("accuracy", "neg_mae", "neg_rmse")


def alignment(candidate, others, scoring):
    """The alignment score of one label against the remaining annotators' labels of the item."""
    if scoring == "accuracy":
        return float(np.mean([candidate == other for other in others]))
    gaps = np.asarray(others, dtype=float) - float(candidate)
    if scoring == "neg_mae":
        return -float(np.mean(np.abs(gaps)))
    if scoring == "neg_rmse":
        return -float(np.sqrt(np.mean(gaps**2)))
    raise ValueError(f"unknown alignment scoring {scoring!r}: one of {', '.join(SCORINGS)}")


def benjamini_yekutieli(p_values, q=Q):
    """Which hypotheses Benjamini-Yekutieli rejects at false discovery rate q: the k smallest
    p-values, k the largest rank with p_(k) <= k q / (m * H_m), H_m = 1 + 1/2 + ... + 1/m."""
    p_values = np.asarray(p_values, dtype=float)
    m = p_values.size
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(p_values, kind="stable")
    harmonic = np.sum(1.0 / np.arange(1, m + 1))
    below = p_values[order] <= np.arange(1, m + 1) * q / (m * harmonic)
    if below.any():
        rejected[order[: np.flatnonzero(below)[-1] + 1]] = True
    return rejected


def one_sided_p(differences, epsilon):
    """p-value of H0: mean(d) >= epsilon against mean(d) < epsilon (one-sample t-test).

    With no spread in d the t statistic is undefined; the data are then certain: p = 0 when every
    d is below epsilon, 1 otherwise. Fewer than two items give no test (None).
    """
    differences = np.asarray(differences, dtype=float)
    if differences.size < 2:
        return None
    if np.ptp(differences) == 0:
        return 0.0 if differences[0] < epsilon else 1.0
    return float(stats.ttest_1samp(differences, popmean=epsilon, alternative="less").pvalue)


def annotator_advantages(humans, judge, left_out, scoring):
    """`(items, W_f, W_h)` for one left-out annotator: the items that annotator and the judge
    labelled and at least one other annotator labelled too, and the two indicator vectors."""
    items, judge_wins, human_wins = [], [], []
    for item, label in humans[left_out].items():
        if item not in judge:
            continue
        others = [labels[item] for name, labels in humans.items() if name != left_out and item in labels]
        if not others:
            continue
        judge_score = alignment(judge[item], others, scoring)
        human_score = alignment(label, others, scoring)
        items.append(item)
        judge_wins.append(judge_score >= human_score)
        human_wins.append(human_score >= judge_score)
    return items, np.array(judge_wins, dtype=float), np.array(human_wins, dtype=float)


def alt_test(humans, judge, *, scoring, epsilon=EPSILON["crowd"], q=Q, min_items=None):
    """The alt-test of one judge.

    `humans`: {annotator: {item: label}}; `judge`: {item: label}. Labels are compared with ==
    under `accuracy` and as numbers otherwise. Returns omega, rho, epsilon, scoring, the number
    of annotators tested and of distinct items used, whether the judge passes (omega >= 0.5),
    one row per annotator, and warnings below the paper's minimums. `min_items`: leave out
    annotators with fewer shared items (the authors' filter) instead of only warning.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"unknown alignment scoring {scoring!r}: one of {', '.join(SCORINGS)}")
    rows, used, skipped = [], set(), []
    for annotator in sorted(humans, key=str):
        items, judge_wins, human_wins = annotator_advantages(humans, judge, annotator, scoring)
        if min_items is not None and len(items) < min_items:
            skipped.append(annotator)
            continue
        p_value = one_sided_p(human_wins - judge_wins, epsilon)
        if p_value is None:
            continue
        used.update(items)
        rows.append(
            {
                "annotator": annotator,
                "n_items": len(items),
                "rho_judge": float(judge_wins.mean()),
                "rho_human": float(human_wins.mean()),
                "p_value": p_value,
            }
        )
    rejected = benjamini_yekutieli([row["p_value"] for row in rows], q)
    for row, won in zip(rows, rejected, strict=True):
        row["judge_wins"] = bool(won)
    omega = float(rejected.mean()) if rows else None
    warnings = []
    if skipped:
        warnings.append(f"{len(skipped)} annotator(s) left out with fewer than {min_items} shared items")
    if len(rows) < MIN_ANNOTATORS:
        warnings.append(
            f"{len(rows)} annotator(s) could be tested; the alt-test needs at least {MIN_ANNOTATORS} "
            "(with fewer it only asks which human the judge resembles)"
        )
    few = [row["annotator"] for row in rows if row["n_items"] < MIN_ITEMS]
    if few:
        warnings.append(
            f"{len(few)} annotator(s) with fewer than {MIN_ITEMS} shared items: the t-test's normality "
            "assumption is doubtful there (the paper recommends 50-100 items per annotator)"
        )
    return {
        "omega": omega,
        "rho": float(np.mean([row["rho_judge"] for row in rows])) if rows else None,
        "epsilon": float(epsilon),
        "scoring": scoring,
        "q": float(q),
        "n_annotators": len(rows),
        "n_items": len(used),
        "min_items_per_annotator": min((row["n_items"] for row in rows), default=0),
        "passes": omega is not None and omega >= 0.5,
        "annotators": rows,
        "warnings": warnings,
    }
