"""Text set in LaTeX, escaped, pure (no Django): the report's tables and the datasheet's LaTeX both
write with it, so a name prints the same in either."""

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
