from django import template

register = template.Library()


@register.filter
def cell(value):
    """A report table cell: 3 decimals for floats, p-values below 0.001 in scientific notation."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and abs(value) < 0.001:
            return f"{value:.1e}"
        return f"{value:.3f}"
    return value


@register.filter
def is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)
