"""The report page assembled from the registered sections: each one that applies gives its include's
context and its entries in "On this page"; long tables are cut to their first rows (the full table
is one click away, on its "show all" page, and in the exports), so the page stays light whatever
the study's size.

The stored report (`Report.data`) keeps full-precision machine fields, which the exports write as
they are; the sections only shape them for the page (human labels, rounded cells, CIs as "[low, high]").
"""

from dataclasses import dataclass

from analysis.report.cells import plural
from analysis.sections import registry


@dataclass
class PagePart:
    """One section on the page: its include and that include's context (None: nothing to draw), and
    its `(anchor, label)` entries in the page's contents."""

    name: str
    template: str | None
    context: dict | None
    nav: list


def page_parts(data):
    """The sections that apply to this report, in page order."""
    parts = []
    for section in registry.SECTIONS:
        if section.template is None or not section.applies(data):
            continue
        context = section.present(data) if section.present is not None else None
        nav = section.nav(data, context) if section.nav is not None and context is not None else []
        parts.append(PagePart(section.name, section.template, context, nav))
    return parts


def page_tables(parts):
    """Every table the page's sections show, in page order (the "Not shown" list names those without rows)."""
    return [table for part in parts if part.context for table in part.context.get("tables", ())]


def display_tables(data):
    """The tables the page shows, cut to their page rows, in page order."""
    return page_tables(page_parts(data))


def display_table(data, name, *, limit="page"):
    """One table for the page, cut to its page rows (limit="page"), to `limit` rows, or not (None).
    KeyError when no section shows a table of that name."""
    found = registry.page_table(name)
    if found is None:
        raise KeyError(name)
    builder, page_rows = found
    table = builder(data)
    table.total_rows = len(table.rows)
    if limit == "page":
        limit = page_rows
    if limit is not None:
        table.rows = table.rows[:limit]
    return table


def full_table(data, name):
    """Every row of a table, for its "show all" page (every pair where the page shows the best metric's)."""
    builder, _page_rows = registry.page_table(name, full=True)
    table = builder(data)
    table.total_rows = len(table.rows)
    return table


def why_empty(data):
    """One sentence saying why a report has nothing to show, or "" when it has something."""
    filters = data.get("filters") or {}
    before = filters.get("n_ratings_before_exclusions") or 0
    if data.get("n_ratings"):
        if not data.get("metrics"):
            return "No metric scores yet: compute metrics for this dataset, then the correlations appear here."
        return ""
    excluded = filters.get("excluded_annotators") or []
    who = f" (excluded: {', '.join(str(w) for w in excluded)})" if excluded else ""
    if before and filters.get("apply_exclusions"):
        return (
            f"All {plural(before, 'rating')} were excluded by the quality rules{who}, so there is nothing to "
            "correlate. See Quality to review the exclusions, or show this report with exclusions ignored."
        )
    if data.get("pairwise") or data.get("bws"):
        return ""  # a pairwise (or best-worst) study: its ranking and the metrics' pairwise accuracy are the report
    conversations = data.get("conversations") or {}
    if conversations.get("n_ratings") or conversations.get("n_turn_ratings") or conversations.get("n_judgements"):
        return ""  # a conversation study: its section is the report
    judgements = filters.get("n_judgements_before_exclusions") or 0
    if judgements and filters.get("apply_exclusions"):
        return (
            f"All {plural(judgements, 'pairwise judgement')} were excluded by the quality rules{who}, so there "
            "is no ranking. See Quality to review the exclusions, or show this report with exclusions ignored."
        )
    return "No ratings or pairwise judgements yet: the report fills in once annotators have answered."
