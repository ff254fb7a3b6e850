"""Pairwise accuracy (meta-evaluation, issue 20): how often a metric orders two systems, or two
responses to one context, as the humans do (tie-calibrated at the response level)."""

import numpy as np

from analysis.report.cells import count, number, small_number
from analysis.report.display import Column, DisplayTable
from analysis.report.inputs import response_contexts
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings
from analysis.stats.pairwise_accuracy import system_pairwise_accuracy, utterance_pairwise_accuracy

EXPORT_COLUMNS = [
    "metric",
    "system_accuracy",
    "system_pairs",
    "system_agree",
    "accuracy_tie_calibrated",
    "epsilon",
    "accuracy_untied",
    "response_pairs",
    "contexts",
    "human_ties",
]


def compute(context):
    systems = context.part("system_level")["systems"]
    return {"pairwise_accuracy": pairwise_accuracy_section(context.inputs, systems)}


def pairwise_accuracy_section(inputs, systems):
    """System level over every pair of systems; response level within contexts, tie-calibrated."""
    human_means = np.array([row["human_mean"] if row["human_mean"] is not None else np.nan for row in systems])
    system_rows = []
    for name in inputs.metrics:
        means = np.array([_mean(row, name) for row in systems])
        system_rows.append({"metric": name, **system_pairwise_accuracy(human_means, means)})
    return {
        "system_level": system_rows,
        "utterance_level": utterance_pairwise_accuracy(inputs.human, inputs.metrics, response_contexts(inputs)),
    }


def _mean(row, name):
    value = (row["metrics"].get(name) or {}).get("mean")
    return np.nan if value is None else value


def _threshold(epsilon):
    """The tie threshold: a number, not a p-value (three decimals, or 1.4e-18 when it would round to 0.000)."""
    return small_number(epsilon)


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


def pairwise_accuracy_export(data):
    section = data.get("pairwise_accuracy") or {}
    systems = {row["metric"]: row for row in section.get("system_level", [])}
    rows = []
    for row in section.get("utterance_level", []):
        system = systems.get(row["metric"], {})
        rows.append(
            [row["metric"], system.get("accuracy"), system.get("n_pairs"), system.get("n_agree"), row["accuracy"],
             row["epsilon"], row["accuracy_untied"], row["n_pairs"], row["n_contexts"], row["human_ties"]]
        )  # fmt: skip
    return EXPORT_COLUMNS, rows


SECTION = Section(
    name="pairwise_accuracy",
    keys=("pairwise_accuracy",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(pairwise_accuracy_table),
    nav=tables_nav,
    page_tables={"pairwise_accuracy": pairwise_accuracy_table},
    tables={"pairwise_accuracy": pairwise_accuracy_export},
)
