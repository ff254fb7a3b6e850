"""How every page writes a p-value: "<0.001" below a thousandth, else three decimals.

One function for the report's tables, its terminal summary and the ADEM model page (browser walk
F18: "0.000", "<0.001" and "5.58e-05" appeared side by side). It lives in the lowest layer so that
scoring's pages use the same one as analysis's.
"""

import math


def p_value(value):
    """`"<0.001"`, `"0.042"`, or "–" for a missing p."""
    if value is None or value == "":
        return "–"
    value = float(value)
    if math.isnan(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def small_number(value, digits=3):
    """A number that is not a p-value but may be tiny (a tie threshold): three decimals, or two
    significant digits in scientific notation when it is not zero but would round to 0.000."""
    if value is None or value == "":
        return "–"
    value = float(value)
    if value != 0 and abs(value) < 0.5 * 10**-digits:
        return f"{value:.1e}"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text
