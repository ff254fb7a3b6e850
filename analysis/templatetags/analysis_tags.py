from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from analysis.report.cells import number, p_value
from annotation.services.text.reserved import system_label as reserved_system_label

register = template.Library()


@register.filter
def cell(value):
    """A number in the report's prose: 3 decimals, never scientific notation ("sd 0.000", not 2.2e-16)."""
    return number(value)


@register.filter
def pvalue(value):
    """A p-value as the report's tables write it: "<0.001" rather than a rounded "0.000"."""
    return p_value(value)


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


@register.filter
def is_long_text(value):
    """A text cell long enough to wrap (annotator exclusion reasons) rather than widen its column."""
    return isinstance(value, str) and len(value) > 40


@register.filter
def breakable(value):
    """A metric name that may wrap after "_" or ":" (bleu1_<wbr>nostop) on a phone, never mid-word."""
    text = escape(str(value))
    return mark_safe(text.replace("_", "_<wbr>").replace(":", ":<wbr>"))  # escaped above


@register.filter
def system_label(name):
    """`(reference)`, the pairwise reference pseudo-system, as "reference (gold)"; other names as they are."""
    return reserved_system_label(name)


@register.simple_tag(takes_context=True)
def render_section(context, part):
    """A report section's include (`analysis.services.page.PagePart`) with its own context on top
    of the page's, as `{% include %}` would draw it; nothing when the section has nothing to draw."""
    if part.context is None:
        return ""
    template = context.template.engine.get_template(part.template)
    with context.push(**part.context):
        return template.render(context)
