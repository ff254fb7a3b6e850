"""The LaTeX pieces every section's tables share: escaping, numbers, p-values and a booktabs table."""

# The escaping lives beside the other text helpers so that the datasheet (annotation) writes with it too.
from annotation.services.text.latex import latex_escape, latex_escape_tt

__all__ = ["footnotes", "latex_escape", "latex_escape_tt", "number", "p_cell", "tabular"]


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
