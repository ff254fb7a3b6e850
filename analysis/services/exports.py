"""Exports of a report, assembled from the registered sections: JSON, one CSV per table (a zip of
them all), LaTeX tables, a terminal summary.

Every CSV is written through `defusedcsv`, which prefixes a cell that a spreadsheet would run as
a formula (starting with = + - @ | %) with an apostrophe; cells starting with a tab or carriage
return (OWASP's list) get the same prefix here. Numbers are written as numbers, untouched.
"""

import io
import json
import zipfile

from defusedcsv import csv

from analysis.report.latex import number
from analysis.report.population import population_text
from analysis.sections.pairwise import pairwise_summary_lines
from analysis.sections.registry import EXPORTS, SECTIONS, TABLES
from annotation.services.text.numbers import p_value


def table(data, name):
    """(header, rows) of one of the report's tables, flat enough for a CSV."""
    if name not in EXPORTS:
        raise KeyError(f"unknown table {name!r}; choose from {', '.join(TABLES)}")
    return EXPORTS[name](data)


def to_json(data):
    return json.dumps(data, indent=2, sort_keys=False)


# Cells a spreadsheet may treat as the start of a formula that defusedcsv leaves alone.
_CONTROL_STARTS = ("\t", "\r")


def _neutralised(value):
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_CONTROL_STARTS):
        return "'" + value
    return value


def _write_table(out, data, name):
    header, rows = table(data, name)
    # RFC 4180's CRLF rows: the csv module then quotes a cell holding a lone CR, which a "\n"
    # terminator would leave bare (pandas would split the row there).
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([_neutralised(value) for value in row] for row in rows)


def to_csv(data, name=None):
    """One table as CSV; without a name (the command line's stdout), every table, each after a
    `# name` line and a blank line. The web's "all tables" download is `to_zip` instead."""
    out = io.StringIO()
    names = [name] if name else TABLES
    for i, current in enumerate(names):
        if not name:
            if i:
                out.write("\n")
            out.write(f"# {current}\n")
        _write_table(out, data, current)
    return out.getvalue()


def to_zip(data, *, readme=""):
    """Every table as its own CSV (`<table>.csv`), the whole report as `report.json`, and a README."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in TABLES:
            archive.writestr(f"{name}.csv", to_csv(data, name))
        archive.writestr("report.json", to_json(data))
        archive.writestr("README.txt", (readme or "") + _population_readme(data))
    return buffer.getvalue()


def _population_readme(data):
    """What every figure of the files describes (the report's filters), and what the quality tables do."""
    return (
        f"Population: {population_text(data)}\n"
        "Every table describes these ratings and judgements, except agreement_pairs.csv and "
        "agreement_annotators.csv: quality control's survey-wide agreement, the evidence that decided the "
        "exclusions (all systems, all annotators).\n"
    )


# --- LaTeX -----------------------------------------------------------------------


def to_latex(data):
    """booktabs tables of every section that has them (the ranking, utterance and system level, the
    filter sensitivity, the pairwise ranking, ...), ready for a paper."""
    parts = [part for section in SECTIONS if section.latex is not None for part in section.latex(data)]
    population = " ".join(population_text(data).splitlines())
    return f"% Requires \\usepackage{{booktabs}}\n% Population: {population}\n" + "\n\n".join(parts) + "\n"


# --- Terminal ----------------------------------------------------------------------


def summary_table(data, width=None):
    """Compact fixed-width tables for a terminal (used by the demo): the utterance-level
    correlations, and for a pairwise study the Bradley-Terry ranking of the systems."""
    records = data.get("utterance_level", [])
    ranking = pairwise_summary_lines(data)
    if ranking and not records:  # a pairwise study alone: no ratings to correlate with
        return "\n".join(ranking) + "\n"
    name_width = max([len("metric"), len("human (split-half)")] + [len(r["metric"]) for r in records])
    lines = [
        f"{data.get('dataset', '')}: {population_text(data)}",
        f"{'metric':<{name_width}}  {'pearson':>8}  {'p':>8}  {'spearman':>8}  {'p':>8}  {'95% CI (r)':>17}  {'n':>6}",
    ]
    lines.append("-" * len(lines[1]))
    for r in records:
        ci = f"[{r['pearson_ci_low']:.3f}, {r['pearson_ci_high']:.3f}]" if r.get("pearson_ci_low") is not None else "--"
        lines.append(
            f"{r['metric']:<{name_width}}  {number(r['pearson']):>8}  {_pval(r['pearson_p']):>8}  "
            f"{number(r['spearman']):>8}  {_pval(r['spearman_p']):>8}  {ci:>17}  {r['n']:>6}"
        )
    ceiling = data.get("human_ceiling") or {}
    if ceiling.get("pearson") is not None:
        lines.append(
            f"{'human (split-half)':<{name_width}}  {number(ceiling['pearson']):>8}  {'':>8}  "
            f"{number(ceiling.get('spearman')):>8}"
        )
    if ranking:
        lines += ["", *ranking]
    return "\n".join(lines) + "\n"


def _pval(value):
    return "--" if value is None else p_value(value)
