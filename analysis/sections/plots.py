"""The report's plots: human vs human (the split-half halves) and each metric against the humans, per
response and per system. Drawn on request from the report's vectors (`analysis.report.plots`), so
this section computes no key of its own."""

from analysis.sections.base import Section, with_ratings


def compute(context):
    return {}


def present(data):
    return {}


def nav(data, context):
    return [("t-plots", "Plots")]


SECTION = Section(
    name="plots",
    compute=compute,
    applies=with_ratings,
    template="analysis/sections/plots.html",
    present=present,
    nav=nav,
)
