"""The report's LLM-judges section: each judge held against the humans as a rater would be, and
its length bias next to the humans'. `judges_section` builds it, `judges_export_table` flattens it
for the exports; the page shows it with templates/analysis/sections/judges.html.

Judges are also ordinary metrics (judge:<name>): every other table of the report lists them.
"""

import numpy as np

from analysis.report.inputs import word_count
from analysis.sections.base import Section
from analysis.stats.judges import judge_kappas, length_correlations
from annotation.quality.data import annotator_labels
from annotation.quality.selectors import accepted_ratings

JUDGE_PREFIX = "judge:"
JUDGE_TABLES = ("judge_agreement", "judge_annotators", "judge_length")


def judges_section(*, inputs, dataset, surveys, aspect, apply_exclusions):
    """`{"metrics", "agreement": [...], "length": [...]}`; an empty dict when no judge scored."""
    judges = [name for name in inputs.metrics if name.startswith(JUDGE_PREFIX)]
    if not judges:
        return {}
    position = {int(rid): i for i, rid in enumerate(inputs.response_ids.tolist())}
    rows = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    by_annotator = {}
    for annotator_id, response_id, score in rows.values_list("annotator_id", "response_id", "score"):
        if response_id in position:
            by_annotator.setdefault(annotator_id, []).append((position[response_id], score))
    # Labels as quality control writes them: the worker id, or provider:worker where two providers
    # share one (keyed by the bare id, the second annotator's ratings replaced the first's).
    names = annotator_labels(list(by_annotator))
    by_worker = {names.get(pk, str(pk)): ratings for pk, ratings in by_annotator.items()}
    agreement = []
    for name in judges:
        result = judge_kappas(inputs.metrics[name], inputs.human, by_worker)
        agreement.append({"judge": name, **result})
    lengths = np.array(
        [word_count(inputs.texts.get(int(rid), "")) for rid in inputs.response_ids.tolist()], dtype=float
    )
    measures = {"human": inputs.human, **{name: inputs.metrics[name] for name in judges}}
    return {"metrics": judges, "agreement": agreement, "length": length_correlations(lengths, measures)}


def judges_export_table(data, name):
    """(header, rows) of one of the section's tables for the CSV exports."""
    section = data.get("judges") or {}
    if name == "judge_agreement":
        header = ["judge", "n", "kappa_mean", "kappa_mean_linear", "kappa_mean_quadratic"]
        header += ["median_kappa_annotators", "median_quadratic_annotators"]
        return header, [[row.get(column) for column in header] for row in section.get("agreement", [])]
    if name == "judge_annotators":
        header = ["judge", "annotator", "n", "kappa", "kappa_quadratic"]
        rows = [
            [row["judge"], one["annotator"], one["n"], one["kappa"], one["kappa_quadratic"]]
            for row in section.get("agreement", [])
            for one in row["annotators"]
        ]
        return header, rows
    header = ["measure", "pearson", "pearson_p", "spearman", "spearman_p", "n"]
    return header, [[row.get(column) for column in header] for row in section.get("length", [])]


def compute(context):
    section = judges_section(
        inputs=context.inputs, dataset=context.dataset, surveys=context.surveys, aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    )  # fmt: skip
    return {"judges": section}


def applies(data):
    """Where an LLM judge scored the rated responses."""
    return bool((data.get("judges") or {}).get("agreement"))


def present(data):
    return {"judges": data.get("judges")}


def nav(data, context):
    return [("t-judges", "LLM judges as raters")]


SECTION = Section(
    name="judges",
    keys=("judges",),
    compute=compute,
    applies=applies,
    template="analysis/sections/judges.html",
    present=present,
    nav=nav,
    tables={name: lambda data, name=name: judges_export_table(data, name) for name in JUDGE_TABLES},
)
