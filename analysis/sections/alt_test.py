"""Can this judge replace the crowd? (issue 39): the alternative-annotator test (Calderon et al.
2025, `analysis.stats.alttest`) of every LLM judge, and, as a report option, of every metric, on
the answers this report's filters select.

- Rating studies: each annotator's ratings of the report's responses; a judge's score is one more
  annotator's label, aligned by negative RMSE (the paper's choice for numeric labels). A metric
  not on the rating scale (the option) is first mapped onto it by matching its mean and standard
  deviation to the humans' ratings, which changes no ranking.
- Pairwise studies: each annotator's verdicts on the pairs this report keeps, a pair named by its
  two responses whatever side they were shown on; a pairwise judge's verdict (from its cache, both
  orders; a verdict that flips with the order counts as a tie) is one more, aligned by accuracy.

The verdict per judge: omega (the share of annotators it beats at epsilon after the
Benjamini-Yekutieli correction) >= 0.5. Epsilon is the report option (crowd 0.1, skilled 0.15,
experts 0.2); the paper's minimums (3 annotators, 30 items each) become warnings.
"""

import importlib

import numpy as np

from analysis.report.cells import number
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.report.options import EPSILONS
from analysis.report.population import kept_systems, population_clause
from analysis.sections.base import Section
from annotation.kinds.pairwise.selectors import judged_pairs
from annotation.quality.data import annotator_labels
from annotation.quality.selectors import accepted_ratings
from scoring.services.judges.pairwise import cached_judge_verdicts

JUDGE_PREFIX = "judge:"
RATING_SCORING = "neg_rmse"
PAIRWISE_SCORING = "accuracy"
COLUMNS = ["metric", "kind", "omega", "rho", "epsilon", "scoring", "n_annotators", "n_items", "passes"]
ANNOTATOR_COLUMNS = ["metric", "kind", "annotator", "n_items", "rho_judge", "rho_human", "p_value", "judge_wins"]


def alttest():
    # scipy.stats is loaded when a report is computed, not when Django starts.
    return importlib.import_module("analysis.stats.alttest")


def rating_humans(context):
    """`{annotator label: {response id: score}}` of the accepted (or all) ratings of the report's responses."""
    wanted = {int(pk) for pk in context.inputs.response_ids.tolist()}
    rows = accepted_ratings(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    ).values_list("annotator_id", "response_id", "score")
    by_annotator = {}
    for annotator_id, response_id, score in rows:
        if response_id in wanted:
            by_annotator.setdefault(annotator_id, {})[response_id] = float(score)
    names = annotator_labels(list(by_annotator))
    return {names.get(pk, str(pk)): labels for pk, labels in by_annotator.items()}


def on_human_scale(values, humans):
    """A metric's scores mapped linearly onto the humans' ratings (same mean and standard deviation)."""
    ratings = np.array([score for labels in humans.values() for score in labels.values()], dtype=float)
    finite = values[np.isfinite(values)]
    spread = finite.std() if finite.size else 0.0
    if spread == 0 or ratings.size == 0:
        return np.full(values.shape, ratings.mean() if ratings.size else np.nan)
    return ratings.mean() + (values - finite.mean()) / spread * ratings.std()


def rating_rows(context, epsilon):
    inputs = context.inputs
    names = [name for name in inputs.metrics if name.startswith(JUDGE_PREFIX)]
    if context.options.get("alt_test_metrics"):
        names += [name for name in inputs.metrics if not name.startswith(JUDGE_PREFIX)]
    if not names:
        return []
    humans = rating_humans(context)
    ids = inputs.response_ids.tolist()
    rows = []
    for name in names:
        values = inputs.metrics[name]
        mapped = not name.startswith(JUDGE_PREFIX)
        if mapped:
            values = on_human_scale(values, humans)
        judge = {int(rid): float(v) for rid, v in zip(ids, values, strict=True) if np.isfinite(v)}
        scoring = context.options.get("alt_scoring") or RATING_SCORING
        result = alttest().alt_test(humans, judge, scoring=scoring, epsilon=epsilon)
        rows.append({"metric": name, "kind": "rating", "mapped_to_scale": mapped, **result})
    return rows


def pair_label(winner, response_a, response_b):
    """A verdict named by the pair's responses, not by the sides they were shown on: "first" is
    the response with the smaller id."""
    if winner not in ("a", "b"):
        return "tie"
    won = response_a if winner == "a" else response_b
    return "first" if won == min(response_a, response_b) else "second"


def pairwise_rows(context, epsilon):
    kept = kept_systems(context.systems)

    def pairs():
        rows = judged_pairs(
            dataset=context.dataset,
            surveys=context.surveys,
            aspect=context.aspect,
            apply_exclusions=context.apply_exclusions,
        )
        return rows if kept is None else [r for r in rows if r["system_a"] in kept and r["system_b"] in kept]

    found = cached_judge_verdicts(dataset=context.dataset, pairs=pairs)
    if not found:
        return []
    humans = {}
    for row in pairs():
        key = tuple(sorted((row["response_a_id"], row["response_b_id"])))
        humans.setdefault(row["worker"], {})[key] = pair_label(
            row["winner"], row["response_a_id"], row["response_b_id"]
        )
    result_rows = []
    for judge, judged in found:
        verdicts = {}
        for _item, row, verdict in judged:
            if verdict.a_first is None or verdict.b_first is None:
                continue  # unreadable in one order: no verdict
            winner = {"A": "a", "B": "b"}.get(verdict.a_first) if verdict.consistent else "tie"
            key = tuple(sorted((row["response_a_id"], row["response_b_id"])))
            verdicts[key] = pair_label(winner, row["response_a_id"], row["response_b_id"])
        result = alttest().alt_test(humans, verdicts, scoring=PAIRWISE_SCORING, epsilon=epsilon)
        result_rows.append(
            {"metric": f"{JUDGE_PREFIX}{judge.name}", "kind": "pairwise", "mapped_to_scale": False, **result}
        )
    return result_rows


def compute(context):
    epsilon_name = context.options.get("epsilon", "crowd")
    epsilon = EPSILONS[epsilon_name]
    rows = rating_rows(context, epsilon) + pairwise_rows(context, epsilon)
    for row in rows:
        row["epsilon_name"] = epsilon_name
    warnings = [f"{row['metric']} ({row['kind']}): {warning}" for row in rows for warning in row["warnings"]]
    return {"alt_test": rows, "alt_test_warnings": warnings}


def applies(data):
    return bool(data.get("alt_test"))


def present(data):
    rows = data.get("alt_test") or []
    return {
        "rows": rows,
        "warnings": data.get("alt_test_warnings") or [],
        "epsilon_name": rows[0]["epsilon_name"] if rows else None,
        "epsilon": rows[0]["epsilon"] if rows else None,
        "population": population_clause(data),
    }


def nav(data, context):
    return [("t-alt-test", "Can a judge replace the crowd?")]


def summary_export(data):
    return COLUMNS, [[row.get(column) for column in COLUMNS] for row in data.get("alt_test") or []]


def annotators_export(data):
    rows = [
        [row["metric"], row["kind"], *[one.get(column) for column in ANNOTATOR_COLUMNS[2:]]]
        for row in data.get("alt_test") or []
        for one in row["annotators"]
    ]
    return ANNOTATOR_COLUMNS, rows


def verdict_text(row):
    """ "yes (ω 0.67, ρ 0.81, ε 0.1, 3 annotators)" as the page and the LaTeX write it."""
    answer = "yes" if row["passes"] else "no"
    return (
        f"{answer} (ω {number(row['omega'], 2)}, ρ {number(row['rho'], 2)}, ε {row['epsilon']:g}, "
        f"{row['n_annotators']} annotators, {row['n_items']:,} items)"
    )


def latex(data):
    rows = data.get("alt_test") or []
    if not rows:
        return []
    cells = [
        [
            latex_escape(row["metric"]),
            row["kind"],
            "yes" if row["passes"] else "no",
            latex_number(row["omega"], 2),
            latex_number(row["rho"], 2),
            f"{row['epsilon']:g}",
            str(row["n_annotators"]),
            str(row["n_items"]),
        ]
        for row in rows
    ]
    caption = (
        f"Alternative-annotator test on {data.get('dataset', '')}: can the judge replace one annotator? "
        "omega: share of annotators the judge beats (Benjamini-Yekutieli, q = 0.05); rho: its mean advantage "
        "probability."
    )
    header = ["Judge", "Kind", "Replaces", "$\\omega$", "$\\rho$", "$\\varepsilon$", "Annotators", "Items"]
    return [tabular(caption, "tab:alt-test", header, cells, columns="llcrrrrr")]


SECTION = Section(
    name="alt_test",
    keys=("alt_test", "alt_test_warnings"),
    compute=compute,
    applies=applies,
    template="analysis/sections/alt_test.html",
    present=present,
    nav=nav,
    tables={"alt_test": summary_export, "alt_test_annotators": annotators_export},
    latex=latex,
)
