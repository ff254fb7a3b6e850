from django import template

from analysis.presentation import number

register = template.Library()


@register.filter
def cell(value):
    """A number in the report's prose: 3 decimals, never scientific notation ("sd 0.000", not 2.2e-16)."""
    return number(value)


@register.filter
def index(sequence, position):
    try:
        return sequence[position]
    except (IndexError, TypeError):
        return None


@register.filter
def without_rows(tables):
    """The tables that have nothing to show (listed once, each with its reason)."""
    return [table for table in tables if not table.rows]
