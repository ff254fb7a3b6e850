"""Exports of a report: JSON, one CSV per table (a zip of them all), LaTeX tables, a terminal summary.

Every CSV is written through `defusedcsv`, which prefixes a cell that a spreadsheet would run as
a formula (starting with = + - @ | %) with an apostrophe; cells starting with a tab or carriage
return (OWASP's list) get the same prefix here. Numbers are written as numbers, untouched.
"""

import io
import json
import zipfile

from defusedcsv import csv

from analysis import exporting_metaeval
from analysis.exporting_audit import AUDIT_TABLES, latex_sensitivity, latex_signatures, signed
from analysis.exporting_pairwise import PAIRWISE_TABLES, pairwise_latex, pairwise_summary_lines, pairwise_table
from analysis.judges import JUDGE_TABLES, judges_export_table
from analysis.learned import trained_here_note
from analysis.population import population_text
from annotation.text.numbers import p_value

TABLES = (
    "utterance_level",
    "system_level",
    "systems",
    "williams",
    "length_bias",
    "stopwords",
    "failure_analysis",
    "agreement_pairs",
    "agreement_annotators",
    *JUDGE_TABLES,
    *PAIRWISE_TABLES,
    "sensitivity",
    "pairwise_sensitivity",
    "signatures",
    *exporting_metaeval.TABLES,
)

CORRELATION_COLUMNS = [
    "metric",
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "kendall",
    "kendall_p",
    "n",
]


def _rows(records, columns):
    return columns, [[record.get(column) for column in columns] for record in records]


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


def table(data, name):
    """(header, rows) of one of the report's tables, flat enough for a CSV."""
    if name == "utterance_level":
        return signed(data, _rows(data.get(name, []), CORRELATION_COLUMNS))
    if name == "system_level":
        columns = CORRELATION_COLUMNS + exporting_metaeval.SYSTEM_EXTRA_COLUMNS
        return signed(data, _rows(data.get(name, []), columns))
    if name in AUDIT_TABLES:
        return AUDIT_TABLES[name](data)
    if name in exporting_metaeval.TABLES:
        return exporting_metaeval.table(data, name)
    if name == "systems":
        metrics = data.get("metrics", [])
        header = ["system", "n", "human_mean", "human_ci_low", "human_ci_high"]
        for metric in metrics:
            header += [f"{metric}_mean", f"{metric}_ci_low", f"{metric}_ci_high"]
        rows = []
        for system in data.get("systems", []):
            row = [system[c] for c in header[:5]]
            for metric in metrics:
                values = system["metrics"].get(metric, {})
                row += [values.get("mean"), values.get("ci_low"), values.get("ci_high")]
            rows.append(row)
        return header, rows
    if name == "williams":
        return _rows(data.get("williams", []), ["a", "b", "r_a", "r_b", "r_ab", "n", "t", "p", "p_two_sided"])
    if name == "length_bias":
        columns = ["measure", "n_short", "mean_short", "n_long", "mean_long", "welch_t", "welch_p"]
        return _rows(data.get("length_bias", {}).get("rows", []), [*columns, "mannwhitney_u", "mannwhitney_p"])
    if name == "stopwords":
        columns = ["metric", "variant"]
        for label in ("with", "without"):
            columns += [f"{key}_{label}" for key in ("pearson", "pearson_p", "spearman", "spearman_p", "mean", "n")]
        return _rows(data.get("stopwords", []), columns)
    if name == "failure_analysis":
        failure = data.get("failure_analysis", {})
        rows = [
            [case["metric"], failure.get("n_good"), case["n_scored_low"], failure.get("learned_metric"),
             case.get("n_learned_high")]
            for case in failure.get("cases", [])
        ]  # fmt: skip
        return ["metric", "n_good", "n_good_scored_low", "learned_metric", "n_learned_high"], rows
    if name == "agreement_pairs":
        pairs = (data.get("agreement") or {}).get("pairs", [])
        return _rows(pairs, ["a", "b", "n", "kappa", "kappa_linear", "kappa_quadratic"])
    if name == "agreement_annotators":
        annotators = (data.get("agreement") or {}).get("annotators", [])
        header, rows = _rows(annotators, ["worker", "kappa", "kappa_judged", "excluded", "reasons"])
        for row in rows:
            row[4] = reasons_text(row[4])
        return header, rows
    if name in JUDGE_TABLES:
        return judges_export_table(data, name)
    if name in PAIRWISE_TABLES:
        return pairwise_table(data, name)
    raise KeyError(f"unknown table {name!r}; choose from {', '.join(TABLES)}")


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

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # In LaTeX's default (OT1) fonts these three print as other glyphs: "<b>" came out as "¡b¿".
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def _latex_char(char):
    # A line break inside a name would end a table row's line, and two would end the paragraph
    # (a caption then stops with "Runaway argument"); other control characters are refused by TeX.
    if char < " " or char == "\x7f":
        return " "
    return _LATEX_SPECIAL.get(char, char)


def latex_escape(text):
    return "".join(_latex_char(char) for char in str(text))


# Typewriter fonts (cmtt) print "<", ">" and "|" as themselves: inside \texttt a signature such as
# "bleu2|nrefs:1" keeps its bars, so it can be copied from the PDF as written.
_TYPEWRITER_LITERAL = frozenset("<>|")


def latex_escape_tt(text):
    """`latex_escape` for text set in \texttt."""
    return "".join(char if char in _TYPEWRITER_LITERAL else _latex_char(char) for char in str(text))


def _number(value, digits=3):
    return "--" if value is None else f"{value:.{digits}f}"


def _p(value):
    if value is None:
        return "--"
    return "$<$0.001" if value < 0.001 else f"{value:.3f}"


def _tabular(caption, label, header, rows, footnote="", *, columns=None):
    """A booktabs table; by default the first column (a name) is left-aligned and the numbers right."""
    columns = columns or "l" + "r" * (len(header) - 1)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", *([footnote] if footnote else []), r"\end{table}"]
    return "\n".join(lines)


def _correlation_rows(records):
    return [
        [
            latex_escape(r["metric"]),
            _number(r["pearson"]),
            _p(r["pearson_p"]),
            _number(r["spearman"]),
            _p(r["spearman_p"]),
            _number(r.get("kendall")),
            _p(r.get("kendall_p")),
            str(r["n"]),
        ]
        for r in records
    ]


def _trained_here_latex(data):
    """A footnote saying which ADEM metrics were trained on these very ratings (optimistic figures)."""
    note = trained_here_note(data)
    return rf"\par\smallskip{{\footnotesize {latex_escape(note)}}}" if note else ""


def _footnotes(*lines):
    return "\n".join(line for line in lines if line)


def to_latex(data):
    """booktabs tables (utterance level with the human ceiling; system level), ready for a paper."""
    header = ["Metric", "Pearson", "$p$", "Spearman", "$p$", "Kendall", "$p$", "$n$"]
    rows = _correlation_rows(data.get("utterance_level", []))
    ceiling = data.get("human_ceiling") or {}
    if ceiling.get("pearson") is not None:
        rows.append(
            [r"\textit{Human (split-half)}", _number(ceiling["pearson"]), "--", _number(ceiling.get("spearman")), "--",
             "--", "--", str(int(ceiling.get("n_items_mean") or ceiling.get("n") or 0) or "--")]
        )  # fmt: skip
    name = data.get("dataset", "")  # escaped with the whole caption
    parts = [
        _tabular(
            f"Correlation between automatic metrics and human judgements on {name} (utterance level).",
            "tab:utterance-level",
            header,
            rows,
            _footnotes(latex_signatures(data, latex_escape_tt), _trained_here_latex(data)),
        )
    ]
    if data.get("system_level"):
        parts.append(
            _tabular(
                f"Correlation between metrics and human judgements across systems on {name}.",
                "tab:system-level",
                header,
                _correlation_rows(data["system_level"]),
                latex_signatures(data, latex_escape_tt),
            )
        )
    parts += pairwise_latex(data, tabular=_tabular, escape=latex_escape, number=_number)
    if data.get("sensitivity"):
        parts.append(_tabular(*latex_sensitivity(data, latex_escape)))
    ranking = exporting_metaeval.latex_ranking(data)
    if ranking is not None:
        caption, label, header, rows = ranking
        # Cluster (a number), then the metric's name: right, left, then the numbers.
        cells = [[latex_escape(cell) for cell in row] for row in rows]
        columns = "rl" + "r" * (len(header) - 2)
        parts.insert(0, _tabular(caption, label, header, cells, _trained_here_latex(data), columns=columns))
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
            f"{r['metric']:<{name_width}}  {_number(r['pearson']):>8}  {_pval(r['pearson_p']):>8}  "
            f"{_number(r['spearman']):>8}  {_pval(r['spearman_p']):>8}  {ci:>17}  {r['n']:>6}"
        )
    ceiling = data.get("human_ceiling") or {}
    if ceiling.get("pearson") is not None:
        lines.append(
            f"{'human (split-half)':<{name_width}}  {_number(ceiling['pearson']):>8}  {'':>8}  "
            f"{_number(ceiling.get('spearman')):>8}"
        )
    if ranking:
        lines += ["", *ranking]
    return "\n".join(lines) + "\n"


def _pval(value):
    return "--" if value is None else p_value(value)
