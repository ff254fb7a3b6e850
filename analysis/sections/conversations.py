"""The report's Conversations section (issue 37): shown when the dataset holds conversations.

Per system the mean of every whole-conversation aspect (bootstrap CI over conversations) and a
ranking with significance clusters; per-turn aspects likewise, yes/no per-turn aspects as rates
with Wilson intervals; ACUTE win rates and Bradley-Terry strengths per question; agreement per kind
of answer with the split-half ceiling; the stored conversation metrics against whole-conversation
ratings at conversation and system level; per-turn ratings against the overall score. Figures in
`analysis.report.conversation_figures`; here the JSON part, the page's tables and the exports.
"""

from analysis.report.cells import Estimate, count, interval, number, p_value, plural
from analysis.report.conversation_figures import aspect_order, conversation_figures
from analysis.report.conversation_inputs import conversation_inputs
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present


def compute(context):
    inputs = conversation_inputs(dataset=context.dataset, systems=context.systems, aspect=context.aspect,
                                 surveys=context.surveys, apply_exclusions=context.apply_exclusions)  # fmt: skip
    if inputs is None:
        return {"conversations": None}
    part = conversation_figures(inputs, n_boot=context.n_boot, seed=context.seed, n_perm=context.n_perm)
    part["population"] = population(part, context)
    part["method"] = METHOD | {"bootstrap_samples": context.n_boot, "permutations": context.n_perm,
                               "seed": context.seed}  # fmt: skip
    return {"conversations": part}


METHOD = {
    "systems": "mean over a system's conversations of each conversation's mean rating; 95% percentile bootstrap "
    "over that system's conversations",
    "ranking": "systems ranked by mean; a system opens a new cluster when a system of the current cluster is above "
    "it at one-sided bootstrap p < 0.05 (share of resamples, drawn per system, in which it is not above)",
    "turn_systems": "per-turn rating aspects: each conversation's mean over its rated turns, then as `systems`",
    "flags": "yes/no (0-1) per-turn aspects: share of per-turn ratings at 1, Wilson score interval",
    "acute_consistency": "swapped repeat pairs of ACUTE surveys: share whose main answer mirrors the first, Wilson "
    "interval",
    "acute": "per question: Bradley-Terry (ties half a win each), 95% bootstrap over compared pairs of "
    "conversations; win rate = wins / (wins + losses), Wilson interval; rank_ub as Chatbot Arena's",
    "agreement": "Krippendorff's alpha (nominal for 0-1 aspects and comparisons, ordinal for rating scales) over "
    "items with two ratings or more; median pairwise Cohen's kappa for 0-1 aspects and comparisons; split-half: "
    "mean Pearson r between random halves of the annotators",
    "metrics": "each stored conversation metric against each conversation's mean rating of an aspect (an LLM "
    "judge's whole-conversation score, judge:<name>, against the aspect its prompt asked about only): Pearson, "
    "Spearman, Kendall tau-b with p-values and 95% bootstrap CIs over conversations (as responses); cluster: "
    "per aspect, metrics ranked by Pearson r and grouped by paired permutation tests (as the metrics' ranking); "
    "system level: systems' means, Boot-Both CIs",
    "turns_vs_overall": "each conversation's mean per-turn score and its worst turn's score against its overall score",
    "turn_metrics": "each stored turn-level metric (every reference-free one, on each system turn with the "
    "conversation so far as its context) against each per-turn aspect's mean over a turn's annotators (a flag's: "
    "the share who ticked it): Pearson, Spearman, Kendall tau-b with p-values and 95% percentile bootstrap CIs "
    "over rated turns",
}


def population(part, context):
    """Which conversations and answers the figures describe (the report's filters), in one sentence."""
    systems = f"systems {', '.join(sorted(context.systems))} only" if context.systems else "every system"
    surveys = f"answers of survey {context.survey.name} only" if context.survey is not None else "every survey's "
    surveys += "" if context.survey is not None else "and imported answers"
    exclusions = (part.get("exclusions") or {}).get("note", "")
    return (
        f"{plural(part['n_conversations'], 'conversation')} of {plural(part['n_systems'], 'system')} ({systems}); "
        f"{plural(part['n_ratings'], 'whole-conversation rating')}, {plural(part['n_turn_ratings'], 'per-turn rating')}"
        f", {plural(part['n_judgements'], 'side-by-side comparison')} (every question); {surveys}; ratings of "
        f"{part.get('aspect_scope', 'every aspect')}. {exclusions}."
    )


def applies(data):
    return bool(data.get("conversations"))


def _part(data):
    return data.get("conversations") or {}


def _note(data, text):
    return f"{text} Population: {_part(data).get('population', '')}"


def systems_table(data):
    """Systems as columns, aspects as rows (each a mean over conversations with its CI)."""
    rows = _part(data).get("systems", [])
    systems = sorted({row["system"] for row in rows})
    aspects = aspect_order({row["aspect"] for row in rows})
    cell = {(row["system"], row["aspect"]): row for row in rows}
    scales = _part(data).get("scales", {})
    body = []
    for aspect in aspects:
        scale = scales.get(aspect)
        label = f"{aspect} ({scale[0]}–{scale[1]})" if scale else aspect
        cells = []
        for system in systems:
            row = cell.get((system, aspect))
            cells.append(Estimate(number(row["mean"], 2), interval(row["ci_low"], row["ci_high"], 2)) if row else "–")
        body.append([label, *cells])
    if body:
        n = {system: max(r["n"] for r in rows if r["system"] == system) for system in systems}
        body.insert(0, ["Conversations rated (n)", *[count(n[s]) for s in systems]])
    return DisplayTable(
        name="conversation_systems",
        title="Conversations: per-system means",
        download="conversation means per system",
        columns=[Column("Aspect (scale)")] + [Column(s, True) for s in systems],
        rows=body,
        note=_note(data, "Mean over each system's conversations of the conversation's mean rating, with a 95% "
                   "percentile bootstrap CI over that system's conversations; n: conversations with a rating."),
        empty="No whole-conversation ratings.",
    )  # fmt: skip


def ranking_table(data):
    rows = _part(data).get("ranking", [])
    return DisplayTable(
        name="conversation_ranking",
        title="Conversations: systems ranked, with significance clusters",
        download="conversation ranking",
        columns=[Column("Rated"), Column("Aspect"), Column("Cluster", True), Column("System"), Column("Mean", True),
                 Column("95% CI", True), Column("n", True)],
        rows=[[("whole" if r["kind"] == "whole" else "per turn"), r["aspect"], str(r["cluster"]), r["system"],
               number(r["mean"], 2), interval(r["ci_low"], r["ci_high"], 2), count(r["n"])] for r in rows],
        note=_note(data, "Per aspect, systems best first in clusters: a system opens a new cluster when a system "
                   "of the cluster above it has a higher mean at one-sided bootstrap p < 0.05 (as the metrics' "
                   "ranking). Systems in one cluster are not significantly different."),
        empty="Needs two systems with ratings and the bootstrap switched on.",
    )  # fmt: skip


def turn_systems_table(data):
    rows = _part(data).get("turn_systems", [])
    return DisplayTable(
        name="conversation_turn_systems",
        title="Per-turn ratings: per-system means",
        download="per-turn means per system",
        columns=[Column("System"), Column("Aspect"), Column("Mean", True), Column("95% CI", True), Column("n", True)],
        rows=[[r["system"], r["aspect"], number(r["mean"], 2), interval(r["ci_low"], r["ci_high"], 2), count(r["n"])]
              for r in rows],
        note=_note(data, "Each conversation's mean over its rated system turns, averaged over the system's "
                   "conversations (95% bootstrap CI over conversations; n: conversations)."),
        empty="No per-turn ratings on a rating scale.",
    )  # fmt: skip


def flags_table(data):
    rows = _part(data).get("flags", [])
    return DisplayTable(
        name="conversation_flags",
        title="Per-turn flags: rates per system",
        download="per-turn flag rates",
        columns=[Column("System"), Column("Flag"), Column("Yes", True), Column("Rated turns", True),
                 Column("Rate", True), Column("95% CI (Wilson)", True)],
        rows=[[r["system"], r["aspect"], count(r["flagged"]), count(r["n"]), number(r["rate"]),
               interval(r["ci_low"], r["ci_high"])] for r in rows],
        note=_note(data, "Yes/no aspects rated per system turn (scale 0–1): the share of per-turn ratings that "
                   "say yes (1), with its Wilson score interval."),
        empty="No yes/no per-turn ratings.",
    )  # fmt: skip


def acute_table(data):
    rows = _part(data).get("acute", [])
    return DisplayTable(
        name="conversation_acute",
        title="Side-by-side comparisons (ACUTE-Eval)",
        download="ACUTE win rates and strengths",
        columns=[Column("Question"), Column("System"), Column("Wins", True), Column("Losses", True),
                 Column("Ties", True), Column("Win rate", True), Column("95% CI", True), Column("Strength (BT)", True),
                 Column("95% CI", True), Column("Rank (UB)", True)],
        rows=[[r["question"], r["system"], count(r["wins"]), count(r["losses"]), count(r["ties"]),
               number(r["win_rate"]), interval(r["win_rate_ci_low"], r["win_rate_ci_high"]), number(r["strength"], 2),
               interval(r["ci_low"], r["ci_high"], 2), count(r["rank_ub"])] for r in rows],
        note=_note(data, "Per question, systems best first by Bradley-Terry strength (log scale, mean 0; ties "
                   "half a win each; 95% bootstrap over the compared pairs of conversations). Win rate: wins / "
                   "(wins + losses), Wilson interval. Rank (UB): 1 + the systems whose interval lies above."),
        empty="No side-by-side comparisons.",
    )  # fmt: skip


def consistency_table(data):
    rows = _part(data).get("acute_consistency", [])
    return DisplayTable(
        name="conversation_acute_consistency",
        title="Side-by-side comparisons: self-consistency on repeated pairs",
        download="ACUTE repeat-pair consistency",
        columns=[Column("Repeated pairs", True), Column("Answered consistently", True), Column("Share", True),
                 Column("95% CI (Wilson)", True), Column("Annotators", True)],
        rows=[[count(r["repeats"]), count(r["consistent"]), number(r["rate"]), interval(r["ci_low"], r["ci_high"]),
               count(r["n_annotators"])] for r in rows],
        note=_note(data, "A repeated pair is one of an annotator's pairs shown again later on the page with its "
                   "sides swapped; it is consistent when the main question's answer names the same conversation "
                   "(mirrored side). Repeats are checks: they are not counted in the win rates above."),
        empty="No repeated pairs (an ACUTE survey with two attention checks a task or more adds one a task).",
    )  # fmt: skip


KIND_LABELS = {"whole": "whole conversation", "turn": "per turn", "acute": "comparison"}


def agreement_table(data):
    rows = _part(data).get("agreement", [])
    return DisplayTable(
        name="conversation_agreement",
        title="Conversations: agreement between annotators",
        download="conversation agreement",
        columns=[Column("Rated"), Column("Aspect or question"), Column("α level"), Column("Krippendorff's α", True),
                 Column("Cohen's κ", True), Column("Split-half r", True), Column("Items rated twice+", True),
                 Column("Note")],
        rows=[[KIND_LABELS[r["kind"]], r["aspect"], r["level"], number(r["alpha"]), number(r["kappa"]),
               number(r["split_half"]), count(r["n_items_shared"]), r["note"]] for r in rows],
        note=_note(data, "α over the items rated two times or more (nominal for yes/no aspects and comparisons, "
                   "ordinal for rating scales); κ: median Cohen's κ over pairs of annotators (yes/no and "
                   "comparisons); split-half r: the human ceiling, mean Pearson r between random halves of the "
                   "annotators."),
        empty="No conversation ratings or comparisons.",
    )  # fmt: skip


def _correlation_rows(records, first, *, clusters=False):
    return [[r[first], r["aspect"], *([count(r.get("cluster"))] if clusters else []), number(r.get("pearson")),
             interval(r.get("pearson_ci_low"), r.get("pearson_ci_high")), p_value(r.get("pearson_p")),
             number(r.get("spearman")),
             interval(r.get("spearman_ci_low"), r.get("spearman_ci_high")), p_value(r.get("spearman_p")),
             number(r.get("kendall")), p_value(r.get("kendall_p")), count(r.get("n"))] for r in records]  # fmt: skip


CORRELATION_COLUMNS = [Column("Pearson r", True), Column("95% CI", True), Column("p", True), Column("Spearman ρ", True),
                       Column("95% CI", True), Column("p", True), Column("Kendall τ-b", True), Column("p", True),
                       Column("n", True)]  # fmt: skip


def metrics_table(data):
    return DisplayTable(
        name="conversation_metrics",
        title="Conversation metrics against whole-conversation ratings",
        download="conversation metric correlations",
        columns=[Column("Metric"), Column("Aspect"), Column("Cluster", True), *CORRELATION_COLUMNS],
        rows=_correlation_rows(_part(data).get("metrics", []), "metric", clusters=True),
        note=_note(data, "Each reference-free conversation metric against each conversation's mean rating of an "
                   "aspect, and each LLM judge (judge:name) asked about the whole conversation against the aspect "
                   "it was asked about; 95% percentile bootstrap CIs over conversations; p: two-sided test of no "
                   "correlation; n: conversations both scored and rated. Cluster: per aspect, metrics by Pearson r "
                   "in clusters that paired permutation tests cannot tell apart (as the metrics' ranking; 1 = best)."),
        empty="No conversation metrics yet: run compute_conversation_metrics (or Compute on the conversations page).",
    )  # fmt: skip


def metrics_system_table(data):
    return DisplayTable(
        name="conversation_metrics_system",
        title="Conversation metrics against ratings, per system",
        download="conversation metric correlations per system",
        columns=[Column("Metric"), Column("Aspect"), *CORRELATION_COLUMNS],
        rows=_correlation_rows(_part(data).get("metrics_system", []), "metric"),
        note=_note(data, "Systems' mean metric score against their mean rating (n: systems); CIs from Boot-Both "
                   "resamples of systems and conversations. With few systems these intervals are wide."),
        empty="Needs conversation metrics and three systems at least.",
    )  # fmt: skip


def turn_metrics_table(data):
    return DisplayTable(
        name="conversation_turn_metrics",
        title="Turn metrics against per-turn ratings",
        download="turn metric correlations",
        columns=[Column("Metric"), Column("Turn aspect"), *CORRELATION_COLUMNS],
        rows=_correlation_rows(_part(data).get("turn_metrics", []), "metric"),
        note=_note(data, "Each reference-free metric of a system turn (its context: the conversation so far) "
                   "against the turn's mean rating of a per-turn aspect (a flag's: the share of annotators who "
                   "ticked it); 95% percentile bootstrap CIs over rated turns (turns of one conversation are "
                   "resampled as if independent); p: two-sided test of no correlation; n: turns both scored and "
                   "rated."),
        empty="No turn metrics yet, or no per-turn ratings: run compute_conversation_metrics.",
    )  # fmt: skip


def turns_table(data):
    records = [{**r, "label": f"{r['summary']} turn"} for r in _part(data).get("turns_vs_overall", [])]
    rows = [[r["label"], r["aspect"], number(r.get("pearson")), p_value(r.get("pearson_p")), number(r.get("spearman")),
             p_value(r.get("spearman_p")), number(r.get("kendall")), p_value(r.get("kendall_p")), count(r.get("n"))]
            for r in records]  # fmt: skip
    return DisplayTable(
        name="conversation_turns_vs_overall",
        title="Per-turn ratings against the overall rating",
        download="per-turn against overall",
        columns=[Column("Per-turn summary"), Column("Turn aspect"), Column("Pearson r", True), Column("p", True),
                 Column("Spearman ρ", True), Column("p", True), Column("Kendall τ-b", True), Column("p", True),
                 Column("n", True)],
        rows=rows,
        note=_note(data, "Each conversation's mean per-turn score (mean turn), and its lowest-scored turn (worst "
                   "turn; rating scales only), against its overall rating; n: conversations with both."),
        empty="Needs per-turn ratings and overall ratings of the same conversations.",
    )  # fmt: skip


BUILDERS = (systems_table, ranking_table, turn_systems_table, flags_table, acute_table, consistency_table,
            agreement_table,
            metrics_table, metrics_system_table, turn_metrics_table, turns_table)  # fmt: skip

# The CSV exports: the JSON's rows, flat.
EXPORT_COLUMNS = {
    "conversation_systems": ("systems", ["system", "aspect", "mean", "ci_low", "ci_high", "n"]),
    "conversation_ranking": ("ranking", ["kind", "aspect", "cluster", "system", "mean", "ci_low", "ci_high", "n"]),
    "conversation_ranking_tests": ("ranking_tests", ["kind", "aspect", "a", "b", "mean_a", "mean_b", "delta", "p",
                                                     "p_two_sided"]),
    "conversation_turn_systems": ("turn_systems", ["system", "aspect", "mean", "ci_low", "ci_high", "n"]),
    "conversation_flags": ("flags", ["system", "aspect", "flagged", "n", "rate", "ci_low", "ci_high"]),
    "conversation_acute": ("acute", ["question", "system", "wins", "losses", "ties", "win_rate", "win_rate_ci_low",
                                     "win_rate_ci_high", "strength", "ci_low", "ci_high", "rank_ub"]),
    "conversation_acute_matrix": ("acute_matrix", ["question", "system", "opponent", "wins", "losses", "ties",
                                                   "win_rate", "ci_low", "ci_high"]),
    "conversation_acute_consistency": ("acute_consistency", ["repeats", "consistent", "rate", "ci_low", "ci_high",
                                                             "n_annotators"]),
    "conversation_agreement": ("agreement", ["kind", "aspect", "level", "alpha", "kappa", "split_half", "n_ratings",
                                             "n_items", "n_items_shared", "n_annotators", "note"]),
    "conversation_metrics": ("metrics", ["metric", "aspect", "cluster", "pearson", "pearson_p", "pearson_ci_low",
                                         "pearson_ci_high", "spearman", "spearman_p", "spearman_ci_low",
                                         "spearman_ci_high", "kendall", "kendall_p", "n"]),
    "conversation_metrics_system": ("metrics_system", ["metric", "aspect", "pearson", "pearson_p", "pearson_ci_low",
                                                       "pearson_ci_high", "spearman", "spearman_p", "kendall",
                                                       "kendall_p", "n"]),
    "conversation_turn_metrics": ("turn_metrics", ["metric", "aspect", "pearson", "pearson_p", "pearson_ci_low",
                                                   "pearson_ci_high", "spearman", "spearman_p", "spearman_ci_low",
                                                   "spearman_ci_high", "kendall", "kendall_p", "n"]),
    "conversation_turns_vs_overall": ("turns_vs_overall", ["aspect", "summary", "overall_aspect", "pearson",
                                                           "pearson_p", "spearman", "spearman_p", "kendall",
                                                           "kendall_p", "n"]),
}  # fmt: skip


def export(name):
    key, columns = EXPORT_COLUMNS[name]

    def table(data):
        return columns, [[record.get(column) for column in columns] for record in _part(data).get(key, [])]

    return table


def latex(data):
    """The per-system means (one row per system and aspect) and the metric correlations."""
    part = _part(data)
    if not part:
        return []
    name = data.get("dataset", "")
    tables = []
    if part.get("systems"):
        rows = [[latex_escape(r["system"]), latex_escape(r["aspect"]), latex_number(r["mean"], 2),
                 f"[{latex_number(r['ci_low'], 2)}, {latex_number(r['ci_high'], 2)}]", str(r["n"])]
                for r in part["systems"]]  # fmt: skip
        tables.append(tabular(f"Mean whole-conversation ratings per system on {name} (95% bootstrap CI over "
                              "conversations).", "tab:conversation-systems",
                              ["System", "Aspect", "Mean", "95\\% CI", "$n$"], rows))  # fmt: skip
    if part.get("acute"):
        rows = [[latex_escape(r["question"]), latex_escape(r["system"]), str(r["wins"]), str(r["ties"]),
                 str(r["losses"]), latex_number(r["strength"], 2)] for r in part["acute"]]  # fmt: skip
        tables.append(tabular(f"ACUTE-Eval comparisons on {name}: Bradley-Terry strength per question.",
                              "tab:conversation-acute", ["Question", "System", "Wins", "Ties", "Losses", "Strength"],
                              rows, columns="llrrrr"))  # fmt: skip
    if part.get("metrics"):
        rows = [[latex_escape(r["metric"]), latex_escape(r["aspect"]), latex_number(r["pearson"]),
                 latex_number(r["spearman"]), latex_number(r.get("kendall")), str(r["n"])]
                for r in part["metrics"]]  # fmt: skip
        tables.append(tabular(f"Conversation-level metrics against whole-conversation ratings on {name}.",
                              "tab:conversation-metrics", ["Metric", "Aspect", "Pearson", "Spearman", "Kendall", "$n$"],
                              rows, columns="llrrrr"))  # fmt: skip
    return tables


SECTION = Section(
    name="conversations",
    keys=("conversations",),
    compute=compute,
    applies=applies,
    template=TABLES_TEMPLATE,
    present=tables_present(*BUILDERS),
    nav=tables_nav,
    page_tables={builder({}).name: builder for builder in BUILDERS},
    tables={name: export(name) for name in EXPORT_COLUMNS},
    latex=latex,
)
