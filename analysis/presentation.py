"""The report's tables as people read them: human labels, rounded cells, CIs as "[low, high]".

The stored report (`Report.data`) keeps full-precision machine fields, which the exports write
as they are; this module only shapes them for the page. Each table carries a short note saying
how its statistic was computed, and long tables are cut to their first rows (the full table is
one click away and in the exports), so the page stays light whatever the study's size.
"""

from analysis.cells import Estimate, count, interval, number, p_value, plural
from analysis.display import Column, DisplayTable
from analysis.exporting import reasons_text
from analysis.learned import trained_here_note
from analysis.presentation_metaeval import METAEVAL_BUILDERS, RANKING_BUILDERS

# Rows a table that grows with the annotators shows on the report page; the rest are on its
# "show all" page and in the CSV. Tables of metrics show every metric (up to METRIC_ROWS).
PAGE_ROWS = 25
METRIC_ROWS = 200
ANNOTATOR_TABLES = ("agreement_pairs", "agreement_annotators")
# Williams pairs inside the report page's "every pair" toggle (15 metrics: 105 pairs).
FULL_WILLIAMS_ROWS = 120


# --- tables --------------------------------------------------------------------------------

CORRELATION_COLUMNS = [
    Column("Metric"),
    Column("Pearson r", True),
    Column("95% CI", True),
    Column("p", True),
    Column("Spearman ρ", True),
    Column("95% CI", True),
    Column("p", True),
    Column("Kendall τ-b", True),
    Column("p", True),
    Column("n", True),
]
SYSTEM_COLUMNS = [
    *CORRELATION_COLUMNS[:-3],
    Column("Kendall τ-b", True),
    Column("95% CI", True),
    Column("p", True),
    Column("n", True),
]

# The agreement tables are quality control's, not the report population's (browser walk F01).
QUALITY_SCOPE = (
    " Quality control's figures for the whole survey (every system and annotator, whatever this report's "
    "filters): the evidence that decided the exclusions. The human-ceiling line gives κ and α of the ratings "
    "this report uses."
)


def _correlation_rows(records, *, p_suffix="", kendall_ci=False):
    """p_suffix "_bootboth": the p-values read off the Boot-Both resamples that give the CIs."""
    return [
        [
            row["metric"],
            number(row.get("pearson")),
            interval(row.get("pearson_ci_low"), row.get("pearson_ci_high")),
            p_value(row.get(f"pearson_p{p_suffix}")),
            number(row.get("spearman")),
            interval(row.get("spearman_ci_low"), row.get("spearman_ci_high")),
            p_value(row.get(f"spearman_p{p_suffix}")),
            number(row.get("kendall")),
            *([interval(row.get("kendall_ci_low"), row.get("kendall_ci_high"))] if kendall_ci else []),
            p_value(row.get(f"kendall_p{p_suffix}")),
            count(row.get("n")),
        ]
        for row in records
    ]


def _boot(data):
    return (data.get("method") or {}).get("bootstrap_samples", 0)


def utterance_table(data):
    n = data.get("n_responses", 0)
    boot = _boot(data)
    ci = (
        f"95% CIs: percentile bootstrap over the {n:,} responses ({boot:,} resamples, seed {data['method']['seed']})"
        if boot
        else "no CIs (bootstrap switched off)"
    )
    return DisplayTable(
        name="utterance_level",
        title="Per-response correlations",
        download="per-response correlations",
        columns=CORRELATION_COLUMNS,
        rows=_correlation_rows(data.get("utterance_level", [])),
        note=(
            f"Each metric against the mean accepted human score of each of {plural(n, 'response')} "
            f"(n: responses the metric scores). p: two-sided test of no correlation. {ci}. " + trained_here_note(data)
        ).strip(),
        empty="No metric scores yet: compute metrics for this dataset first.",
    )


def system_table(data):
    k = data.get("n_systems", 0)
    return DisplayTable(
        name="system_level",
        title="Per-system correlations",
        download="per-system correlations",
        columns=SYSTEM_COLUMNS,
        rows=_correlation_rows(data.get("system_level", []), p_suffix="_bootboth", kendall_ci=True),
        note=(
            f"The {plural(k, 'system')}' mean human score against their mean metric score: n = {k} systems. "
            f"Resampled: the systems and the contexts together (Boot-Both, Deutsch et al. 2021; {_boot(data):,} "
            "resamples): each resample draws systems with replacement and contexts with replacement, and "
            "recomputes every system's means over its responses to the drawn contexts. p: share of resamples "
            "on the far side of 0, doubled, so an interval excludes 0 exactly when p < 0.05. With few systems "
            "these intervals are wide: that is the honest uncertainty of a system ranking. The classical "
            "t-test p-values (systems as the sample) are in the exports."
        ),
        empty="Needs at least three systems with rated responses.",
    )


def systems_table(data):
    """Per-system means transposed: systems as columns, human and each metric as rows."""
    systems = data.get("systems", [])
    columns = [Column("Measure")] + [Column(row["system"], True) for row in systems]
    rows = [["Responses (n)"] + [count(row["n"]) for row in systems]]
    rows.append(
        ["Human"] + [Estimate(number(row["human_mean"], 2), interval(row["human_ci_low"], row["human_ci_high"], 2))
                     for row in systems]
    )  # fmt: skip
    for metric in data.get("metrics", []):
        cells = []
        for row in systems:
            values = row["metrics"].get(metric) or {}
            cells.append(Estimate(number(values.get("mean")), interval(values.get("ci_low"), values.get("ci_high"))))
        rows.append([metric, *cells])
    boot = _boot(data)
    return DisplayTable(
        name="systems",
        title="Per-system means",
        download="per-system means",
        columns=columns,
        rows=rows if systems else [],
        note=(
            "Mean of each measure over a system's rated responses, with a 95% CI from a percentile bootstrap "
            f"over that system's responses ({boot:,} resamples)."
        ),
        empty="No rated responses.",
    )


WILLIAMS_FULL_COLUMNS = [
    Column("Metric a"),
    Column("Metric b"),
    Column("r (a)", True),
    Column("r (b)", True),
    Column("r (a, b)", True),
    Column("n", True),
    Column("t", True),
    Column("p (a > b)", True),
    Column("p (two-sided)", True),
]


def _williams_row(row):
    return [
        row["a"],
        row["b"],
        number(row["r_a"]),
        number(row["r_b"]),
        number(row["r_ab"]),
        count(row["n"]),
        number(row["t"]),
        p_value(row["p"]),
        p_value(row["p_two_sided"]),
    ]


def best_metric(data):
    """The metric with the highest per-response Pearson r (None when no metric has one)."""
    rows = [row for row in data.get("utterance_level", []) if row.get("pearson") is not None]
    return max(rows, key=lambda row: row["pearson"])["metric"] if rows else None


def williams_full_table(data):
    pairs = data.get("williams", [])
    return DisplayTable(
        name="williams",
        title=f"Williams' test, every pair of metrics ({plural(len(pairs), 'pair')})",
        download="Williams' test, every pair",
        columns=WILLIAMS_FULL_COLUMNS,
        rows=[_williams_row(row) for row in pairs],
        note="Each pair named so that metric a has the higher Pearson r; p (a > b) is one-sided.",
    )


def williams_table(data):
    """The best metric against each other metric; every pair behind a toggle (and in the CSV)."""
    pairs = data.get("williams", [])
    best = best_metric(data)
    compact = []
    for row in pairs:
        if best not in (row["a"], row["b"]):
            continue
        other = row["b"] if row["a"] == best else row["a"]
        better = row["a"] == best
        verdict = "yes" if better and row["p"] is not None and row["p"] < 0.05 else "no"
        compact.append(
            [other, number(row["r_a"] if better else row["r_b"]), number(row["r_b"] if better else row["r_a"]),
             number(row["t"] if better else -row["t"] if row["t"] is not None else None),
             p_value(row["p"] if better else 1 - row["p"] if row["p"] is not None else None), verdict]
        )  # fmt: skip
    full = williams_full_table(data)
    full.rows = full.rows[:FULL_WILLIAMS_ROWS]
    return DisplayTable(
        name="williams",
        title=f"Williams' test: does {best or 'the best metric'} correlate better than each other metric?",
        download="Williams' test, every pair",
        columns=[
            Column("Other metric"),
            Column(f"r ({best})", True),
            Column("r (other)", True),
            Column("t", True),
            Column(f"p ({best} > other)", True),
            Column("Better at 5%?"),
        ],
        rows=compact,
        note=(
            f"{best} has the highest per-response Pearson r. Williams' (1959) t for two correlations sharing the "
            "human score, on the responses both metrics score (df = n − 3); p is one-sided. "
            "The full table lists every pair, each named so that metric a has the higher r."
        ),
        empty="Needs at least two metrics scored on more than three responses.",
        full=full if pairs else None,
    )


def length_table(data):
    bias = data.get("length_bias") or {}
    threshold = bias.get("threshold", 6)
    rows = [
        [row["measure"], count(row["n_short"]), number(row["mean_short"]), count(row["n_long"]),
         number(row["mean_long"]), number(row["welch_t"]), p_value(row["welch_p"]),
         number(row["mannwhitney_u"], 1), p_value(row["mannwhitney_p"])]
        for row in bias.get("rows", [])
    ]  # fmt: skip
    return DisplayTable(
        name="length_bias",
        title=f"Length bias: |Δwords| ≤ {threshold} vs > {threshold}",
        download="length bias",
        columns=[
            Column("Measure"),
            Column(f"n (≤ {threshold})", True),
            Column("Mean", True),
            Column(f"n (> {threshold})", True),
            Column("Mean", True),
            Column("Welch t", True),
            Column("p", True),
            Column("Mann-Whitney U", True),
            Column("p", True),
        ],
        rows=rows,
        note=(
            "Δwords: difference in word count between the response and the first reference. Welch's t-test "
            "and the Mann-Whitney U test of the difference between the two groups, both two-sided."
        ),
        empty="No response has a reference to compare its length with.",
    )


STOPWORD_COLUMNS = [
    Column(label, numeric=i >= 2)
    for i, label in enumerate(
        ["Metric", "Variant", "Pearson r (with)", "p", "Pearson r (without)", "p", "Spearman ρ (with)",
         "Spearman ρ (without)", "n"]
    )
]  # fmt: skip
PAIR_COLUMNS = [
    Column(label, numeric=i >= 2)
    for i, label in enumerate(["Annotator A", "Annotator B", "Shared items", "Cohen's κ", "Linear κ", "Quadratic κ"])
]


def stopwords_table(data):
    rows = [
        [row["metric"], row["variant"], number(row["pearson_with"]), p_value(row["pearson_p_with"]),
         number(row["pearson_without"]), p_value(row["pearson_p_without"]), number(row["spearman_with"]),
         number(row["spearman_without"]), count(row["n_with"])]
        for row in data.get("stopwords", [])
    ]  # fmt: skip
    return DisplayTable(
        name="stopwords",
        title="With and without stopwords and punctuation",
        download="stopword comparison",
        columns=STOPWORD_COLUMNS,
        rows=rows,
        note="Each metric next to its variant computed without stopwords and punctuation (Liu et al. 2016, Table 4).",
        empty='No metric has a variant without stopwords (a metric named like "bleu2_nostop").',
    )


def failure_table(data):
    failure = data.get("failure_analysis") or {}
    learned = failure.get("learned_metric")
    rows = [
        [case["metric"], count(failure.get("n_good")), count(case["n_scored_low"]),
         count(case.get("n_learned_high")) if learned else "–"]
        for case in failure.get("cases", [])
    ]  # fmt: skip
    return DisplayTable(
        name="failure_analysis",
        title="Failure analysis: good responses the overlap metrics score low",
        download="failure analysis",
        columns=[
            Column("Overlap metric"),
            Column(f"Good responses (human ≥ {failure.get('good_threshold', 4):g})", True),
            Column(f"Scored ≤ {failure.get('low_threshold', 2):g}", True),
            Column(f"…of which {learned or 'the learned metric'} scores > {failure.get('high_threshold', 4):g}", True),
        ],
        rows=rows,
        note=(
            "Metrics rescaled to the human scores' mean and standard deviation and clipped to [1, 5] "
            "(Lowe et al. 2017); examples below are drawn at random with a fixed seed."
        ),
        empty="Needs bleu2 or rouge_l scores.",
    )


def agreement_pairs_table(data):
    pairs = (data.get("agreement") or {}).get("pairs", [])
    # The pairs that share most items first: their kappas are the ones worth reading.
    ordered = sorted(pairs, key=lambda row: -(row.get("n") or 0))
    rows = [
        [str(row.get("a")), str(row.get("b")), count(row.get("n")), number(row.get("kappa")),
         number(row.get("kappa_linear")), number(row.get("kappa_quadratic"))]
        for row in ordered
    ]  # fmt: skip
    return DisplayTable(
        name="agreement_pairs",
        title="Pairwise annotator agreement",
        download="annotator pairs",
        columns=PAIR_COLUMNS,
        rows=rows,
        note=f"{plural(len(pairs), 'pair')} of annotators who rated the same items, most shared items first."
        + QUALITY_SCOPE,
        empty="No two annotators rated the same item.",
    )


def agreement_annotators_table(data):
    annotators = (data.get("agreement") or {}).get("annotators", [])
    ordered = sorted(annotators, key=lambda row: (not row.get("excluded"), str(row.get("worker"))))
    rows = []
    for row in ordered:
        reasons = reasons_text(row.get("reasons"))
        rows.append(
            [str(row.get("worker")), number(row.get("kappa")), number(row.get("kappa_judged")),
             number(bool(row.get("excluded"))), reasons]
        )  # fmt: skip
    return DisplayTable(
        name="agreement_annotators",
        title="Annotators",
        download="annotators",
        columns=[
            Column("Annotator"),
            Column("Mean κ", True),
            Column("Judged κ", True),
            Column("Excluded"),
            Column("Reasons"),
        ],
        rows=rows,
        note="Mean κ: each annotator's mean Cohen's κ with all the others. Judged κ: the mean over the "
        "annotators who agree with one another, which the κ rule compares with its threshold (quality "
        "control), so an annotator kept may have a lower mean κ than one excluded. Excluded annotators first."
        + QUALITY_SCOPE,
        empty="No annotators.",
    )


BUILDERS = {
    **RANKING_BUILDERS,
    "utterance_level": utterance_table,
    "system_level": system_table,
    **METAEVAL_BUILDERS,
    "systems": systems_table,
    "williams": williams_table,
    "length_bias": length_table,
    "stopwords": stopwords_table,
    "failure_analysis": failure_table,
    "agreement_pairs": agreement_pairs_table,
    "agreement_annotators": agreement_annotators_table,
}


def display_table(data, name, *, limit="page"):
    """One table for the page, cut to its page rows (limit="page"), to `limit` rows, or not (None)."""
    table = BUILDERS[name](data)
    table.total_rows = len(table.rows)
    if limit == "page":
        limit = PAGE_ROWS if name in ANNOTATOR_TABLES else METRIC_ROWS
    if limit is not None:
        table.rows = table.rows[:limit]
    return table


def display_tables(data, *, limit="page"):
    """The page's tables; with no accepted rating, only the annotator tables (they say who was excluded)."""
    names = BUILDERS if data.get("n_ratings") else ("agreement_annotators", "agreement_pairs")
    return [display_table(data, name, limit=limit) for name in names]


def why_empty(data):
    """One sentence saying why a report has nothing to show, or "" when it has something."""
    filters = data.get("filters") or {}
    before = filters.get("n_ratings_before_exclusions") or 0
    if data.get("n_ratings"):
        if not data.get("metrics"):
            return "No metric scores yet: compute metrics for this dataset, then the correlations appear here."
        return ""
    excluded = filters.get("excluded_annotators") or []
    who = f" (excluded: {', '.join(str(w) for w in excluded)})" if excluded else ""
    if before and filters.get("apply_exclusions"):
        return (
            f"All {plural(before, 'rating')} were excluded by the quality rules{who}, so there is nothing to "
            "correlate. See Quality to review the exclusions, or show this report with exclusions ignored."
        )
    if data.get("pairwise"):
        return ""  # a pairwise study: its ranking and the metrics' pairwise accuracy are the report
    judgements = filters.get("n_judgements_before_exclusions") or 0
    if judgements and filters.get("apply_exclusions"):
        return (
            f"All {plural(judgements, 'pairwise judgement')} were excluded by the quality rules{who}, so there "
            "is no ranking. See Quality to review the exclusions, or show this report with exclusions ignored."
        )
    return "No ratings or pairwise judgements yet: the report fills in once annotators have answered."
