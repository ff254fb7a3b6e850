"""The report's precision-planning section (issue 20, point 6): see `analysis/stats/planning.py`."""

import math

import numpy as np

from analysis.stats.planning import plan, variance_components, williams_p_now

TARGET_WIDTH = 0.1  # default target: a 95% CI on r no wider than 0.1 (e.g. 0.45-0.55)


def _ratings_options(m_now):
    current = max(1, math.ceil(m_now - 1e-9))
    return sorted({round(m_now, 2), current + 1, current + 2, 2 * current})


def _top_two(utterance_rows, williams):
    ranked = sorted(utterance_rows, key=lambda row: -row["pearson"])
    if len(ranked) < 2:
        return None
    a, b = ranked[0]["metric"], ranked[1]["metric"]
    pair = next((row for row in williams if {row["a"], row["b"]} == {a, b}), None)
    if pair is None:
        return None
    return {
        "a": pair["a"],
        "b": pair["b"],
        "r_a": pair["r_a"],
        "r_b": pair["r_b"],
        "r_ab": pair["r_ab"],
        "n": pair["n"],
        "p_now": williams_p_now(pair["r_a"], pair["r_b"], pair["r_ab"], pair["n"]),
    }


def planning_section(rating_rows, utterance_rows, williams, *, n_available, target_width=TARGET_WIDTH, trained_here=()):
    """How many rated responses, at how many ratings each, for the target width on the best
    metric's r and to separate the top two metrics. rating_rows: (annotator, response, score).

    `trained_here`: metrics trained on these very ratings (ADEM models of this dataset). Their r
    here is optimistic, so planning uses the best metric not among them (browser walk F20); only
    when every metric is one of them does it plan on one, with `trained_here_caveat` set.
    """
    rows = [row for row in utterance_rows if row.get("pearson") is not None]
    if not rows or not rating_rows:
        return {"metric": None, "reason": "Needs accepted ratings and at least one metric with a correlation."}
    trained_here = set(trained_here)
    fair = [row for row in rows if row["metric"] not in trained_here]
    left_out = sorted({row["metric"] for row in rows} & trained_here) if fair else []
    rows = fair or rows
    best = max(rows, key=lambda row: row["pearson"])
    responses = np.array([row[1] for row in rating_rows])
    scores = np.array([row[2] for row in rating_rows], dtype=float)
    s_b, s_w, m_now = variance_components(responses, scores)
    low, high = best.get("pearson_ci_low"), best.get("pearson_ci_high")
    width = (high - low) if low is not None and high is not None else None
    top_two = _top_two(rows, williams)
    result = plan(
        r=best["pearson"],
        ci_width=width,
        n=best["n"],
        s_b=s_b,
        s_w=s_w,
        m_now=m_now,
        target_width=target_width,
        ratings_options=_ratings_options(m_now),
        top_two=None if top_two is None else (top_two["r_a"], top_two["r_b"], top_two["r_ab"]),
    )
    for option in result["options"]:
        for key in ("responses_for_width", "responses_to_separate"):
            needed = option[key]
            option[f"more_{key}"] = None if needed is None else max(0, needed - best["n"])
    return {
        "metric": best["metric"],
        "r": best["pearson"],
        "ci_width": width,
        "target_width": target_width,
        "n_responses": best["n"],
        "n_available": n_available,
        "ratings_per_response": m_now,
        "variance_between": s_b,
        "variance_within": s_w,
        "top_two": top_two,
        # left out because trained on these ratings; or, when nothing else is left, the caveat
        "trained_here_left_out": left_out,
        "trained_here_caveat": best["metric"] in trained_here,
        **result,
    }
