"""`{{ p|pvalue }}`: a p-value as every page writes it (annotation.services.text.numbers)."""

from django import template

from annotation.services.text.numbers import p_value

register = template.Library()


@register.filter
def pvalue(value):
    return p_value(value)
