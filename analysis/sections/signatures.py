"""The metrics' signatures (what computed each score, like sacrebleu's): listed under the tables of
metrics' figures on the page, as a last column of their CSVs, a footnote of their LaTeX tables, and a
table of their own."""

from analysis.sections.base import Section
from scoring.services.metrics.signatures import dataset_signatures


def compute(context):
    return {"signatures": dataset_signatures(dataset=context.dataset, metrics=list(context.inputs.metrics))}


def signature_of(data, metric):
    return ((data or {}).get("signatures") or {}).get(metric)


def signed(data, header_rows):
    """A table whose rows start with a metric name, with that metric's signature as a last column."""
    header, rows = header_rows
    return [*header, "signature"], [[*row, signature_of(data, row[0])] for row in rows]


def signatures_table(data):
    signatures = data.get("signatures") or {}
    return ["metric", "signature"], [
        [metric, signatures[metric]] for metric in data.get("metrics", []) if metric in signatures
    ]


def signature_lines(data):
    """`[(metric, signature)]` of the report's metrics, in the report's order (the page's list)."""
    signatures = (data or {}).get("signatures") or {}
    return [(metric, signatures[metric]) for metric in (data or {}).get("metrics", []) if metric in signatures]


def latex_signatures(data, escape):
    """A footnote under a table listing its metrics' signatures (empty when there are none)."""
    signatures = [signature_of(data, metric) for metric in data.get("metrics", [])]
    signatures = [signature for signature in signatures if signature]
    if not signatures:
        return ""
    listed = "; ".join(rf"\texttt{{{escape(signature)}}}" for signature in signatures)
    return rf"\par\smallskip{{\footnotesize Metric signatures: {listed}.}}"


SECTION = Section(
    name="signatures",
    keys=("signatures",),
    compute=compute,
    tables={"signatures": signatures_table},
)
