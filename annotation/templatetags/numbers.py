"""`{{ p|pvalue }}`: a p-value as every page writes it (annotation.text.numbers)."""

from django import template

from annotation.text.numbers import p_value

register = template.Library()


@register.filter
def pvalue(value):
    return p_value(value)
