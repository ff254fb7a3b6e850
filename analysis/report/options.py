"""The report's options beside its filters (issue 39): the alt-test's cost margin epsilon and how it
scores a rating's alignment (minus RMSE or minus MAE), whether
ordinary metrics take the alt-test too, the pairwise ranking's scale, and the baseline of the
length-controlled win rate. Free of numpy: the page's view reads them.

An option at its default is left out of a report's params, so a report computed before options
existed keeps its key (its hash) and is not computed again for nothing.
"""

# The alt-test's epsilon by who the judge would replace (Calderon et al. 2025's rule of thumb).
EPSILONS = {"crowd": 0.1, "skilled": 0.15, "experts": 0.2}
# How the alt-test scores a rating's alignment with the remaining annotators (the paper allows both).
RATING_SCORINGS = {"neg_rmse": "minus RMSE", "neg_mae": "minus mean absolute error"}
DEFAULTS = {
    "epsilon": "crowd",
    "alt_test_metrics": False,
    "scale": "log",
    "baseline": None,
    "weighting": "plain",
    "alt_scoring": "neg_rmse",
}
SCALES = ("log", "elo")
# How each response's ratings become its human score (issue 40; annotation.quality.weighting says how).
WEIGHTINGS = {
    "plain": "plain mean",
    "zscore": "per-worker z-scores (WMT DA)",
    "mace": "MACE competence-weighted mean",
    "dawid_skene": "Dawid-Skene competence-weighted mean",
    "ordinal": "ordinal-model competence mean",
}


def report_options(
    *, epsilon=None, alt_test_metrics=False, scale=None, baseline=None, weighting=None, alt_scoring=None
):
    """The options that differ from their defaults, normalised (invalid values count as default)."""
    chosen = {
        "epsilon": epsilon if epsilon in EPSILONS else DEFAULTS["epsilon"],
        "alt_test_metrics": bool(alt_test_metrics),
        "scale": scale if scale in SCALES else DEFAULTS["scale"],
        "baseline": (baseline or "")[:200] or None,
        "weighting": weighting if weighting in WEIGHTINGS else DEFAULTS["weighting"],
        "alt_scoring": alt_scoring if alt_scoring in RATING_SCORINGS else DEFAULTS["alt_scoring"],
    }
    return {name: value for name, value in chosen.items() if value != DEFAULTS[name]}


def resolved(options):
    """Every option with its value (the defaults filled in), as the sections read them."""
    return {**DEFAULTS, **(options or {})}


def options_from_query(query):
    """The options of a page's query string (`epsilon`, `alt_metrics=1`, `scale`, `baseline`, `weighting`,
    `alt_scoring`)."""
    return report_options(
        epsilon=query.get("epsilon"),
        alt_test_metrics=query.get("alt_metrics") == "1",
        scale=query.get("scale"),
        baseline=query.get("baseline"),
        weighting=query.get("weighting"),
        alt_scoring=query.get("alt_scoring"),
    )
