"""The report's `bws` section (the section the best-worst task kind contributes): each system's
counting score and Bradley-Terry strength with bootstrap intervals, the split-half reliability of
the scores, and how well each metric's scores follow the replies' counting scores; with their CSV
and LaTeX forms. Orchestration only; the statistics are in `analysis.stats.bws` (loaded when a
report is computed, never when Django starts)."""

import importlib
import math

from analysis.report.latex import latex_escape, number, tabular
from analysis.report.population import kept_systems
from analysis.sections.base import Section
from annotation.kinds.bws.selectors import accepted_bws, bws_rows, response_contexts
from scoring.selectors.scores import metric_scores


def bws_stats():
    return importlib.import_module("analysis.stats.bws")


def correlation_stats():
    return importlib.import_module("analysis.stats.correlation")


def _arrays(rows, system_names):
    """Responses and systems numbered for the statistics, and the judgements in those numbers."""
    responses = sorted({pk for row in rows for pk in row[2]})
    item_of = {pk: i for i, pk in enumerate(responses)}
    names = sorted({system_names[pk] for pk in responses})
    index = {name: i for i, name in enumerate(names)}
    system_of = [index[system_names[pk]] for pk in responses]
    contexts = {}
    # The resampling unit of the bootstrap: a judgement's context, or, for a set across contexts
    # (no context of its own), its set: the judgements of one set share its replies.
    judgements = [
        (
            contexts.setdefault(
                context if context is not None else ("set", item, tuple(sorted(members))), len(contexts)
            ),
            [item_of[pk] for pk in members],
            item_of[best],
            item_of[worst],
        )
        for context, item, members, best, worst in rows
    ]
    groups = [item if item is not None else (context, tuple(sorted(members)))
              for context, item, members, _best, _worst in rows]  # fmt: skip
    return responses, names, system_of, judgements, groups


def _metric_rows(responses, scores, metrics):
    """Per metric: its correlation with the replies' counting scores over the replies it scored."""
    table = []
    for metric, values in sorted(metrics.items()):
        pairs = [(score, values.get(pk)) for pk, score in zip(responses, scores, strict=True)]
        pairs = [(x, y) for x, y in pairs if y is not None and not math.isnan(x)]
        if len(pairs) < 3:
            continue
        result = correlation_stats().correlate([x for x, _ in pairs], [y for _, y in pairs])
        table.append(
            {"metric": metric, "pearson": result["pearson"], "spearman": result["spearman"],
             "kendall": result["kendall"], "n": result["n"]}
        )  # fmt: skip
    table.sort(key=lambda row: -(row["spearman"] if row["spearman"] is not None else -2))
    return table


def bws_section(*, dataset, surveys=None, apply_exclusions=True, n_boot=1000, seed=0, systems=None):
    """The `bws` object of the report, or None when the dataset has no best-worst judgements.

    `{"systems": [{system, count_score, n, strength, ci_low, ci_high, best, worst}] (best first by
    strength), "reliability": {rho, spearman_brown, splits, n_items}, "metrics": [{metric, pearson,
    spearman, kendall, n}], "n_judgements", "n_contexts", "method"}`; `n`: the system's replies'
    appearances in judged tuples.
    """
    rows, system_names = bws_rows(accepted_bws(dataset=dataset, surveys=surveys, apply_exclusions=apply_exclusions))
    kept = kept_systems(systems)
    if kept is not None:
        # a tuple with a filtered-out system is left out whole: its picks were made against it
        rows = [row for row in rows if all(system_names[pk] in kept for pk in row[2])]
    if not rows:
        return None
    responses, names, system_of, judgements, groups = _arrays(rows, system_names)
    across = any(row[0] is None for row in rows)
    stats = bws_stats()
    count, shown = stats.system_counting(judgements, system_of, len(names))
    _, best, worst, _ = stats.counting_scores(judgements, len(responses))
    ranking = stats.strengths(judgements, system_of, names, n_boot=n_boot, seed=seed)
    per_item = stats.counting_scores(judgements, len(responses))[0]
    index = {name: i for i, name in enumerate(names)}
    table = []
    for entry in ranking["systems"]:
        i = index[entry["system"]]
        mine = [n for n, s in enumerate(system_of) if s == i]
        table.append(
            {
                "system": entry["system"],
                "count_score": float(count[i]),
                "n": int(shown[i]),
                "strength": entry["strength"],
                "ci_low": entry["ci_low"],
                "ci_high": entry["ci_high"],
                "best": int(best[mine].sum()),
                "worst": int(worst[mine].sum()),
            }
        )
    return {
        "systems": table,
        "reliability": stats.split_half(judgements, groups, len(responses), seed=seed),
        "metrics": _metric_rows(responses, per_item.tolist(), metric_scores(dataset=dataset)),
        "n_judgements": len(judgements),
        "n_contexts": len(set(response_contexts(responses).values())),
        "across_contexts": across,
        "method": {
            "count_score": "(times picked best - times picked worst) / times shown, over the system's replies",
            "strength": "MaxDiff as Bradley-Terry on implied pairs (best beats every other reply of its tuple, every "
            "other reply beats the worst: 2k-3 pairs per judgement); maximum likelihood, log-strength, mean 0",
            "ci": f"percentile bootstrap over {'sets (each across contexts)' if across else 'contexts'}, "
            f"{n_boot} resamples, 95%",
            "reliability": "split-half: each tuple's judgements dealt at random into two halves, Spearman rho of "
            "the replies' counting scores between halves, Spearman-Brown corrected, mean of random splits",
            "metrics": "correlation of each metric's score with the replies' counting scores (reply level)",
        },
    }


def compute(context):
    section = bws_section(
        dataset=context.dataset,
        surveys=context.surveys,
        apply_exclusions=context.apply_exclusions,
        n_boot=context.n_boot,
        seed=context.seed,
        systems=context.systems,
    )
    return {"bws": section}


def applies(data):
    """Only where the report has best-worst judgements."""
    return bool(data.get("bws"))


def present(data):
    return {"bws": data["bws"]}


def nav(data, context):
    return [("t-bws", "Best-worst scaling")]


COLUMNS = {
    "bws_systems": ["system", "count_score", "n", "strength", "ci_low", "ci_high", "best", "worst"],
    "bws_metrics": ["metric", "pearson", "spearman", "kendall", "n"],
}
SOURCE = {"bws_systems": "systems", "bws_metrics": "metrics"}


def bws_table(data, name):
    """(header, rows) of one best-worst table; no rows when the report has no best-worst judgements."""
    records = (data.get("bws") or {}).get(SOURCE[name], [])
    columns = COLUMNS[name]
    return columns, [[record.get(column) for column in columns] for record in records]


def latex(data):
    """A booktabs table of the systems' best-worst scores ([] if none)."""
    bws = data.get("bws")
    if not bws:
        return []
    rows = [
        [latex_escape(r["system"]), number(r["count_score"]), str(r["n"]), number(r["strength"], 2),
         f"[{number(r['ci_low'], 2)}, {number(r['ci_high'], 2)}]"]
        for r in bws["systems"]
    ]  # fmt: skip
    reliability = bws.get("reliability") or {}
    note = ""
    if reliability.get("spearman_brown") is not None:
        note = f" Split-half reliability (Spearman-Brown) {reliability['spearman_brown']:.2f}."
    return [
        tabular(
            f"Best-worst scaling on {data.get('dataset', '')}: counting score (best $-$ worst)/appearances and "
            f"Bradley-Terry strength on implied pairs (95\\% bootstrap CI over contexts).{note}",
            "tab:bws",
            ["System", "Count score", "$n$", "Strength", "95\\% CI"],
            rows,
        )
    ]


SECTION = Section(
    name="bws",
    keys=("bws",),
    compute=compute,
    applies=applies,
    template="analysis/sections/bws.html",
    present=present,
    nav=nav,
    tables={name: lambda data, name=name: bws_table(data, name) for name in COLUMNS},
    latex=latex,
)
