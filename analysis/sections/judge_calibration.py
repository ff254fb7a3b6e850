"""Judge calibration beside the judges section (issue 39): how each LLM judge's scores sit against
the humans' on the responses this report's filters select (`analysis.stats.calibration`):
confusion matrix on the rating scale against the human mean (and majority), weighted kappa, mean
offset, scale use and per-system bias; and, for pairwise judges, whether their verdict survives
swapping the two responses (position consistency, over the distinct pairs the report keeps).
"""

import numpy as np

from analysis.report.cells import number
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.report.population import kept_systems, population_clause
from analysis.sections.base import Section
from analysis.stats.calibration import calibration, position_consistency
from annotation.kinds.pairwise.selectors import judged_pairs
from annotation.models import Survey
from annotation.quality.data import survey_scale
from annotation.quality.selectors import accepted_ratings
from scoring.judges import pairwise
from scoring.services.judges.pairwise import cached_judge_verdicts

JUDGE_PREFIX = "judge:"
REFERENCES = ("mean", "majority")
SUMMARY_COLUMNS = [
    "judge",
    "reference",
    "n",
    "kappa",
    "kappa_linear",
    "kappa_quadratic",
    "mean_offset",
    "mean_absolute_error",
]
SYSTEM_COLUMNS = ["judge", "system", "n", "judge_mean", "human_mean", "offset", "relative_bias"]
POSITION_COLUMNS = ["judge", "n", "consistent", "first_position_wins"]


def ratings_per_response(context):
    """`(ratings of each of the report's responses, the scale)`: the accepted (or all) ratings,
    aligned with the report's vectors, and the first rated survey's scale."""
    position = {int(rid): i for i, rid in enumerate(context.inputs.response_ids.tolist())}
    per_item = [[] for _ in position]
    surveys = set()
    rows = accepted_ratings(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    ).values_list("survey_id", "response_id", "score")
    for survey_id, response_id, score in rows:
        if response_id in position:
            per_item[position[response_id]].append(score)
            surveys.add(survey_id)
    first = Survey.objects.filter(pk__in=surveys).order_by("created_at", "pk").first()
    return per_item, survey_scale(first, context.aspect) if first is not None else [1, 2, 3, 4, 5]


def rating_calibration(context):
    judges = [name for name in context.inputs.metrics if name.startswith(JUDGE_PREFIX)]
    if not judges:
        return []
    per_item, scale = ratings_per_response(context)
    rows = []
    for name in judges:
        values = context.inputs.metrics[name]
        row = {"judge": name, "scale": list(scale)}
        for reference in REFERENCES:
            row[reference] = calibration(
                values, per_item, scale=scale, systems=context.inputs.systems, reference=reference
            )
        rows.append(row)
    return rows


def _position(pick, first):
    """A pick as "the response shown first won" (1), "second" (0), tie (0.5), unreadable (NaN)."""
    if pick is None:
        return np.nan
    if pick == pairwise.TIE:
        return 0.5
    return 1.0 if pick == first else 0.0


def pairwise_position(context):
    kept = kept_systems(context.systems)

    def pairs():
        rows = judged_pairs(
            dataset=context.dataset,
            surveys=context.surveys,
            aspect=context.aspect,
            apply_exclusions=context.apply_exclusions,
        )
        return rows if kept is None else [r for r in rows if r["system_a"] in kept and r["system_b"] in kept]

    rows = []
    for judge, judged in cached_judge_verdicts(dataset=context.dataset, pairs=pairs):
        distinct = {}
        for item, _row, verdict in judged:
            distinct.setdefault(pairwise.pair_key(item), verdict)
        # In the swapped order the pair's B was shown first: verdict.b_first == "B" is a first-position win.
        shown = [_position(v.a_first, "A") for v in distinct.values()]
        swapped = [_position(v.b_first, "B") for v in distinct.values()]
        rows.append({"judge": f"{JUDGE_PREFIX}{judge.name}", **position_consistency(shown, swapped)})
    return rows


def compute(context):
    return {"judge_calibration": {"ratings": rating_calibration(context), "pairwise": pairwise_position(context)}}


def _section(data):
    return data.get("judge_calibration") or {}


def applies(data):
    section = _section(data)
    return bool(section.get("ratings") or section.get("pairwise"))


def summary_table(data):
    rows = []
    for row in _section(data).get("ratings", []):
        for reference in REFERENCES:
            one = row[reference]
            rows.append(
                [
                    row["judge"],
                    f"human {reference}",
                    f"{one['n']:,}",
                    number(one["kappa"]),
                    number(one["kappa_linear"]),
                    number(one["kappa_quadratic"]),
                    number(one["mean_offset"]),
                    number(one["mean_absolute_error"]),
                ]
            )
    return DisplayTable(
        name="judge_calibration",
        title="Judge calibration against the humans",
        download="judge calibration",
        columns=[
            Column("Judge"),
            Column("Against"),
            Column("n", True),
            Column("κ", True),
            Column("Linear κ", True),
            Column("Quadratic κ", True),
            Column("Mean offset", True),
            Column("Mean abs. error", True),
        ],
        rows=rows,
        note=f"Judge scores and the human mean (or majority) rounded onto the rating scale; offset = judge − human "
        f"mean. On {population_clause(data)}.",
        empty="No LLM judge scored the rated responses.",
    )


def system_table(data):
    rows = [
        [
            row["judge"],
            one["system"],
            f"{one['n']:,}",
            number(one["judge_mean"]),
            number(one["human_mean"]),
            number(one["offset"]),
            number(one["relative_bias"]),
        ]
        for row in _section(data).get("ratings", [])
        for one in row["mean"]["systems"]
    ]
    return DisplayTable(
        name="judge_system_bias",
        title="Judge bias per system",
        download="judge bias per system",
        columns=[
            Column("Judge"),
            Column("System"),
            Column("n", True),
            Column("Judge mean", True),
            Column("Human mean", True),
            Column("Offset", True),
            Column("Relative bias", True),
        ],
        rows=rows,
        note="Relative bias: the system's offset minus the judge's overall offset; positive = the judge favours "
        "this system more than the humans do.",
        empty="No LLM judge scored the rated responses.",
    )


def position_table(data):
    rows = [
        [row["judge"], f"{row['n']:,}", number(row["consistent"]), number(row["first_position_wins"])]
        for row in _section(data).get("pairwise", [])
    ]
    return DisplayTable(
        name="judge_position",
        title="Pairwise judges: position consistency",
        download="judge position consistency",
        columns=[
            Column("Judge"),
            Column("Distinct pairs", True),
            Column("Same verdict both orders", True),
            Column("First-shown wins", True),
        ],
        rows=rows,
        note=f"Each pair judged in both orders; first-shown wins: share of decisive verdicts for the response shown "
        f"first (0.5 = no position bias). Pairs of {population_clause(data)}.",
        empty="No pairwise LLM judge has judged these pairs in both orders.",
    )


def _share(shares, label):
    # JSON keys are strings: the stored report's scale use is keyed "1", "2", ...
    return number(shares.get(str(label), shares.get(label)))


def matrices(data):
    """Per rating judge, its confusion matrices (rows: judge score) and scale use, ready to draw."""
    drawn = []
    for row in _section(data).get("ratings", []):
        use = row["mean"]["scale_use"]
        drawn.append(
            {
                "judge": row["judge"],
                "references": [
                    {
                        "name": reference,
                        "n": row[reference]["n"],
                        "labels": row[reference]["labels"],
                        "rows": list(zip(row[reference]["labels"], row[reference]["confusion"], strict=True)),
                    }
                    for reference in REFERENCES
                ],
                "scale_use": [
                    (label, _share(use["judge"], label), _share(use["humans"], label)) for label in row["scale"]
                ],
            }
        )
    return drawn


def present(data):
    return {
        "calibration": matrices(data),
        "tables": [summary_table(data), system_table(data), position_table(data)],
    }


def nav(data, context):
    return [("t-judge-calibration", "Judge calibration")]


def _export(builder_columns, records):
    return builder_columns, [[record.get(column) for column in builder_columns] for record in records]


def summary_export(data):
    records = [
        {"judge": row["judge"], "reference": reference, **row[reference]}
        for row in _section(data).get("ratings", [])
        for reference in REFERENCES
    ]
    return _export(SUMMARY_COLUMNS, records)


def confusion_export(data):
    header = ["judge", "reference", "judge_score", "human_score", "count"]
    rows = [
        [row["judge"], reference, judge_label, human_label, count]
        for row in _section(data).get("ratings", [])
        for reference in REFERENCES
        for judge_label, counts in zip(row[reference]["labels"], row[reference]["confusion"], strict=True)
        for human_label, count in zip(row[reference]["labels"], counts, strict=True)
    ]
    return header, rows


def system_export(data):
    records = [
        {"judge": row["judge"], **one} for row in _section(data).get("ratings", []) for one in row["mean"]["systems"]
    ]
    return _export(SYSTEM_COLUMNS, records)


def position_export(data):
    return _export(POSITION_COLUMNS, _section(data).get("pairwise", []))


def latex(data):
    ratings = _section(data).get("ratings", [])
    if not ratings:
        return []
    cells = [
        [
            latex_escape(row["judge"]),
            str(row["mean"]["n"]),
            latex_number(row["mean"]["kappa"]),
            latex_number(row["mean"]["kappa_quadratic"]),
            latex_number(row["mean"]["mean_offset"], 2),
            latex_number(row["mean"]["mean_absolute_error"], 2),
        ]
        for row in ratings
    ]
    caption = f"Calibration of LLM judges against the human mean on {data.get('dataset', '')} (scores on the scale)."
    header = ["Judge", "$n$", "$\\kappa$", "Quadratic $\\kappa$", "Offset", "MAE"]
    return [tabular(caption, "tab:judge-calibration", header, cells)]


SECTION = Section(
    name="judge_calibration",
    keys=("judge_calibration",),
    compute=compute,
    applies=applies,
    template="analysis/sections/judge_calibration.html",
    present=present,
    nav=nav,
    page_tables={
        "judge_calibration": summary_table,
        "judge_system_bias": system_table,
        "judge_position": position_table,
    },
    tables={
        "judge_calibration": summary_export,
        "judge_confusion": confusion_export,
        "judge_system_bias": system_export,
        "judge_position": position_export,
    },
    latex=latex,
)
