"""Failure analysis: good responses (by the humans) that the word-overlap metrics score low, and how
many of them the learned metric rescues, with examples drawn at random (Lowe et al. 2017)."""

import numpy as np

from analysis import stats
from analysis.report.cells import count
from analysis.report.display import Column, DisplayTable
from analysis.sections.base import Section, tables_nav, tables_present, with_ratings
from annotation.models import Context

OVERLAP_METRICS = ("bleu2", "rouge_l")
LEARNED_PREFIX = "adem:"
N_EXAMPLES = 5
EXPORT_COLUMNS = ["metric", "n_good", "n_good_scored_low", "learned_metric", "n_learned_high"]


def _round(value):
    value = float(value)
    return None if not np.isfinite(value) else round(value, 3)


def _examples(inputs, indices, normalised, human):
    out = []
    contexts = Context.objects.in_bulk([inputs.contexts[int(inputs.response_ids[i])] for i in indices])
    for i in indices:
        response_id = int(inputs.response_ids[i])
        context = contexts.get(inputs.contexts[response_id])
        out.append(
            {
                "response_id": response_id,
                "system": str(inputs.systems[i]),
                "context": [turn.get("text", "") for turn in (context.turns if context else [])][-3:],
                "response": inputs.texts[response_id],
                "reference": inputs.references.get(inputs.contexts[response_id], ""),
                "human": float(human[i]),
                "normalised": {name: _round(values[i]) for name, values in normalised.items()},
            }
        )
    return out


def compute(context):
    inputs = context.inputs
    learned = context.learned_metric or next((m for m in inputs.metrics if m.startswith(LEARNED_PREFIX)), None)
    chosen = {name: inputs.metrics[name] for name in (*OVERLAP_METRICS, learned) if name in inputs.metrics}
    result = stats.failure_analysis(
        inputs.human, chosen, overlap=OVERLAP_METRICS, learned=learned, n_examples=N_EXAMPLES, seed=context.seed
    )
    normalised = {name: stats.normalise_to_human(values, inputs.human) for name, values in chosen.items()}
    for case in result["cases"]:
        case["examples"] = _examples(inputs, case["examples"], normalised, inputs.human)
        if "rescued_examples" in case:
            case["rescued_examples"] = _examples(inputs, case["rescued_examples"], normalised, inputs.human)
    result["overlap_metrics"] = [name for name in OVERLAP_METRICS if name in inputs.metrics]
    return {"failure_analysis": result}


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


def failure_export(data):
    failure = data.get("failure_analysis", {})
    rows = [
        [case["metric"], failure.get("n_good"), case["n_scored_low"], failure.get("learned_metric"),
         case.get("n_learned_high")]
        for case in failure.get("cases", [])
    ]  # fmt: skip
    return EXPORT_COLUMNS, rows


def present(data):
    """The table, then the examples (templates/analysis/sections/failure_analysis.html)."""
    return {**tables_present(failure_table, signed=True)(data), "failure": data.get("failure_analysis") or {}}


SECTION = Section(
    name="failure_analysis",
    keys=("failure_analysis",),
    compute=compute,
    applies=with_ratings,
    template="analysis/sections/failure_analysis.html",
    present=present,
    nav=tables_nav,
    page_tables={"failure_analysis": failure_table},
    tables={"failure_analysis": failure_export},
)
