"""Quality control's agreement between annotators, as the report shows it: the pairs of annotators
and each annotator's kappa and exclusion reasons. These are survey-wide figures (the evidence that
decided the exclusions), not the report population's: the human ceiling gives those."""

import numpy as np

from analysis.report.cells import count, number, plural
from analysis.report.display import Column, DisplayTable
from analysis.sections.base import PAGE_ROWS, Section, always, display_tables, tables_nav
from annotation.quality.selectors import agreement_summary

EXPORT_PAIR_COLUMNS = ["a", "b", "n", "kappa", "kappa_linear", "kappa_quadratic"]
EXPORT_ANNOTATOR_COLUMNS = ["worker", "kappa", "kappa_judged", "excluded", "reasons"]


def _jsonable(value):
    """Plain JSON values: numpy scalars to Python, NaN/inf to None (PostgreSQL's jsonb rejects NaN).

    Applied to sections other modules produce (the agreement summary), whose types we do not control.
    """
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def compute(context):
    if context.survey is not None:
        return {"agreement": _jsonable(agreement_summary(survey=context.survey))}
    return {"agreement": _jsonable(agreement_summary(dataset=context.dataset))}


def reasons_text(reasons):
    """Quality control's exclusion reasons ({"rule", "detail"} each) as one line: "rule: detail; …"."""
    if not reasons:
        return ""
    if not isinstance(reasons, list | tuple):
        reasons = [reasons]
    parts = []
    for reason in reasons:
        if isinstance(reason, dict):
            rule, detail = reason.get("rule", ""), reason.get("detail", "")
            parts.append(f"{rule}: {detail}" if rule and detail else str(rule or detail))
        else:
            parts.append(str(reason))
    return "; ".join(parts)


# The agreement tables are quality control's, not the report population's (browser walk F01).
QUALITY_SCOPE = (
    " Quality control's figures for the whole survey (every system and annotator, whatever this report's "
    "filters): the evidence that decided the exclusions. The human-ceiling line gives κ and α of the ratings "
    "this report uses."
)

PAIR_COLUMNS = [
    Column(label, numeric=i >= 2)
    for i, label in enumerate(["Annotator A", "Annotator B", "Shared items", "Cohen's κ", "Linear κ", "Quadratic κ"])
]


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


def pairs_export(data):
    pairs = (data.get("agreement") or {}).get("pairs", [])
    return EXPORT_PAIR_COLUMNS, [[record.get(column) for column in EXPORT_PAIR_COLUMNS] for record in pairs]


def annotators_export(data):
    annotators = (data.get("agreement") or {}).get("annotators", [])
    rows = [[record.get(column) for column in EXPORT_ANNOTATOR_COLUMNS] for record in annotators]
    for row in rows:
        row[4] = reasons_text(row[4])
    return EXPORT_ANNOTATOR_COLUMNS, rows


def present(data):
    """Both tables; with no accepted rating the annotators first (they say who was excluded)."""
    builders = (agreement_pairs_table, agreement_annotators_table)
    if not data.get("n_ratings"):
        builders = builders[::-1]
    return {"tables": display_tables(data, builders, limit=PAGE_ROWS), "signed": False}


SECTION = Section(
    name="agreement",
    keys=("agreement",),
    compute=compute,
    applies=always,  # also when every rating was excluded: the tables say who and why
    template="analysis/sections/tables.html",
    present=present,
    nav=tables_nav,
    page_tables={"agreement_pairs": agreement_pairs_table, "agreement_annotators": agreement_annotators_table},
    page_rows=PAGE_ROWS,
    tables={"agreement_pairs": pairs_export, "agreement_annotators": annotators_export},
)
