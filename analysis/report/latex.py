"""The LaTeX pieces every section's tables share: escaping, numbers, p-values and a booktabs table."""

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


def number(value, digits=3):
    return "--" if value is None else f"{value:.{digits}f}"


def p_cell(value):
    if value is None:
        return "--"
    return "$<$0.001" if value < 0.001 else f"{value:.3f}"


def tabular(caption, label, header, rows, footnote="", *, columns=None):
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


def footnotes(*lines):
    return "\n".join(line for line in lines if line)
