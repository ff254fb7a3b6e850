"""The meta-evaluation tables as the report page shows them (issue 20): the headline ranking with
its significance clusters, pairwise accuracy, and precision planning. Same conventions as
`analysis.presentation`: human labels, rounded cells, a note saying how each was computed."""

from analysis.cells import count, interval, number, p_value, plural, small_number
from analysis.display import Column, DisplayTable
from analysis.learned import trained_here_note

PERMUTATION_ROWS = 120  # pairs inside the ranking's "every pair" toggle (15 metrics: 105)


def _threshold(epsilon):
    """The tie threshold: a number, not a p-value (three decimals, or 1.4e-18 when it would round to 0.000)."""
    return small_number(epsilon)


def _significance(data):
    return data.get("significance") or {}


def permutation_table(data):
    tests = _significance(data).get("permutation_tests", [])
    return DisplayTable(
        name="permutation_tests",
        title=f"Paired permutation tests, every pair of metrics ({plural(len(tests), 'pair')})",
        download="permutation tests, every pair",
        columns=[
            Column("Metric a"),
            Column("Metric b"),
            Column("r (a)", True),
            Column("r (b)", True),
            Column("Difference", True),
            Column("n", True),
            Column("p (a > b)", True),
            Column("p (two-sided)", True),
        ],
        rows=[
            [
                row["a"],
                row["b"],
                number(row["r_a"]),
                number(row["r_b"]),
                number(row["delta"]),
                count(row["n"]),
                p_value(row["p"]),
                p_value(row["p_two_sided"]),
            ]
            for row in tests
        ],
        note="Each pair named so that metric a has the higher r on the responses both score; p (a > b) is one-sided.",
    )


def ranking_table(data):
    """The headline: metrics best first, grouped into clusters the data cannot tell apart."""
    significance = _significance(data)
    method = significance.get("method") or {}
    ranking = significance.get("ranking", [])
    full = permutation_table(data)
    full.total_rows = len(full.rows)
    full.rows = full.rows[:PERMUTATION_ROWS]
    n_clusters = len({row["cluster"] for row in ranking})
    return DisplayTable(
        name="ranking",
        title="Which metric to trust: ranking with significance clusters",
        download="ranking with clusters",
        columns=[
            Column("Cluster", True),
            Column("Metric"),
            Column("Pearson r", True),
            Column("95% CI", True),
            Column("n", True),
        ],
        rows=[
            [
                str(row["cluster"]),
                row["metric"],
                number(row["pearson"]),
                interval(row["pearson_ci_low"], row["pearson_ci_high"]),
                count(row["n"]),
            ]
            for row in ranking
        ],
        note=(
            f"Metrics ranked by per-response Pearson r with the human score, in {plural(n_clusters, 'cluster')}: "
            "metrics in one cluster are not significantly different. A metric starts a new cluster when a metric "
            "of the cluster above it beats it in a paired permutation test (scores standardised and swapped "
            f"between the two metrics per response; {method.get('permutations', 0):,} permutations, seed "
            f"{method.get('seed', 0)}, one-sided p < {method.get('alpha', 0.05):g}). Williams' test below is a "
            "second, parametric check. " + trained_here_note(data)
        ).strip(),
        empty="Needs at least two metrics and the bootstrap switched on.",
        full=full if full.rows else None,
    )


def pairwise_accuracy_table(data):
    section = data.get("pairwise_accuracy") or {}
    systems = {row["metric"]: row for row in section.get("system_level", [])}
    rows = []
    for row in section.get("utterance_level", []):
        system = systems.get(row["metric"], {})
        rows.append(
            [
                row["metric"],
                number(system.get("accuracy")),
                count(system.get("n_pairs")),
                number(row["accuracy"]),
                _threshold(row["epsilon"]),
                number(row["accuracy_untied"]),
                count(row["n_pairs"]),
                count(row["n_contexts"]),
                count(row["human_ties"]),
            ]
        )
    return DisplayTable(
        name="pairwise_accuracy",
        title="Pairwise accuracy",
        download="pairwise accuracy",
        columns=[
            Column("Metric"),
            Column("System pairs: accuracy", True),
            Column("Pairs", True),
            Column("Responses: tie-calibrated accuracy", True),
            Column("Tie threshold ε", True),
            Column("Accuracy, ε = 0", True),
            Column("Response pairs", True),
            Column("Contexts", True),
            Column("Human ties", True),
        ],
        rows=rows,
        note=(
            "Systems (Kocmi et al. 2021): share of system pairs the metric orders as the human means do. "
            "Responses: pairs of responses to the same context, averaged per context; a pair is right when the "
            "metric and the humans order it the same way or both tie it, the metric tying pairs whose scores "
            "differ by at most ε, chosen to maximise the accuracy (tie calibration, Deutsch et al. 2023). "
            "ε is fitted on these data, so the calibrated figure is optimistic for a new study; ε = 0 beside it."
        ),
        empty="Needs metric scores and at least two rated responses to one context.",
    )


def planning_table(data):
    planning = data.get("planning") or {}
    top = planning.get("top_two") or {}
    rows = [
        [
            number(option["ratings_per_response"], 2),
            number(option["reliability"]),
            number(option["expected_r"]),
            count(option["responses_for_width"]),
            count(option["more_responses_for_width"]),
            count(option["responses_to_separate"]),
            count(option["more_responses_to_separate"]),
        ]
        for option in planning.get("options", [])
    ]
    separate = f"{top.get('a')} from {top.get('b')}" if top else "the top two metrics"
    return DisplayTable(
        name="planning",
        title="Planning: how many more rated responses?",
        download="planning",
        columns=[
            Column("Ratings per response", True),
            Column("Reliability", True),
            Column("Expected r", True),
            Column(f"Responses for CI width {planning.get('target_width', 0.1):g}", True),
            Column("More", True),
            Column(f"Responses to separate {separate}", True),
            Column("More", True),
        ],
        rows=rows if planning.get("metric") else [],
        note=planning_note(planning),
        empty=planning.get("reason") or "Needs accepted ratings and metric scores.",
    )


def _trained_here_planning(planning):
    """Why planning is not on the report's top metric, or the caveat when it had to be (F20)."""
    if planning.get("trained_here_caveat"):
        return (
            f"Caution: {planning['metric']} was trained on these ratings, so its r here is optimistic and the "
            "numbers below too few; no metric not trained on them has a correlation. "
        )
    left_out = planning.get("trained_here_left_out") or []
    if left_out:
        return (
            f"Planned on {planning['metric']}, the best metric not trained on these ratings ({', '.join(left_out)} "
            f"{'was' if len(left_out) == 1 else 'were'} trained on them: {'its' if len(left_out) == 1 else 'their'} "
            "r here is optimistic). "
        )
    return ""


def planning_note(planning):
    if not planning.get("metric"):
        return ""
    top = planning.get("top_two") or {}
    shown = p_value(top.get("p_now"))
    p_now = f"; now Williams' p {shown if shown.startswith('<') else '= ' + shown}" if top else ""
    return (
        _trained_here_planning(planning)
        + f"For {planning['metric']} (r = {number(planning['r'])}, 95% CI width {number(planning.get('ci_width'))} "
        f"over {planning['n_responses']:,} responses, {number(planning['ratings_per_response'], 2)} ratings each; "
        f"the dataset has {planning.get('n_available', 0):,} responses{p_now}). Reliability of a response's mean "
        "from the variance between and within responses; more ratings raise the expected r (less attenuation). "
        "Widths from Fisher's z, scaled by this study's bootstrap-to-Fisher ratio "
        f"({number(planning.get('design_effect'), 2)}); separation from Williams' test at p < 0.05."
    )


RANKING_BUILDERS = {"ranking": ranking_table}
METAEVAL_BUILDERS = {"pairwise_accuracy": pairwise_accuracy_table, "planning": planning_table}
