"""What a report section is, and what it computes from.

A section is one module of this package ending with `SECTION = Section(...)`, listed once in
`registry.py` (in page order). Everything about one part of the report is in its module:

- `name`: how the rest of RateLab names it (a task kind names the section it contributes to,
  e.g. `report_section = "pairwise"`);
- `compute(context)`: its keys of `Report.data` (`keys`), from the report's inputs (`ReportContext`);
- `applies(data)`: whether the report page shows it: the pairwise section only where there are
  pairwise judgements, the rating sections only where there are accepted ratings (its keys are
  computed whatever: a part with nothing to say is empty or None in the JSON, as it always was);
- `present(data)`: the context of its include (`template`, under templates/analysis/sections/),
  None when it has nothing to draw; `nav(data, context)`: its entries in "On this page";
- `page_tables` / `full_tables`: its tables for the "show all" pages (by table name);
- `tables`: its CSV exports, `{table name: (data) -> (header, rows)}`, in the zip and `--table`;
- `latex(data)`: its LaTeX tables ([] where it has none for this report).

The report (`analysis.services`) assembles the registered sections; nothing here imports one.
"""

from dataclasses import dataclass, field
from typing import Any

from django.utils.text import Truncator

# Rows a table that grows with the annotators shows on the report page; the rest are on its
# "show all" page and in the CSV. Tables of metrics show every metric (up to METRIC_ROWS).
PAGE_ROWS = 25
METRIC_ROWS = 200
NAV_LABEL_CHARS = 40


def always(data):
    return True


def with_ratings(data):
    """The rating sections: shown once the report has accepted ratings to correlate."""
    return bool(data.get("n_ratings"))


@dataclass(frozen=True)
class Section:
    name: str
    compute: Any  # (ReportContext) -> {key: value}, every key of `keys`
    keys: tuple = ()
    applies: Any = always
    template: str | None = None
    present: Any = None  # (data) -> template context, or None
    nav: Any = None  # (data, context) -> [(anchor, label)]
    page_tables: dict = field(default_factory=dict)
    full_tables: dict = field(default_factory=dict)
    page_rows: int = METRIC_ROWS
    tables: dict = field(default_factory=dict)
    latex: Any = None  # (data) -> [LaTeX table, ...]


class ReportContext:
    """What every section computes from: the report's filters, its aligned inputs, its settings
    (bootstrap samples, permutations, seed, options), and the other sections' parts, computed once on first
    request (`part`) whatever the order they are registered in."""

    def __init__(self, *, dataset, survey, aspect, systems, apply_exclusions, learned_metric, inputs, n_boot,
                 n_perm, seed, sections, options=None):  # fmt: skip
        self.dataset = dataset
        self.survey = survey
        self.surveys = [survey] if survey is not None else None
        self.aspect = aspect
        self.systems = systems
        self.apply_exclusions = apply_exclusions
        self.learned_metric = learned_metric
        self.options = options or {}  # analysis.report.options, resolved (every option, defaults filled in)
        self.inputs = inputs
        self.n_boot = n_boot
        self.n_perm = n_perm
        self.seed = seed
        self._sections = {section.name: section for section in sections}
        self._parts = {}
        self._memo = {}

    def part(self, name):
        """The section `name`'s keys of `Report.data`, computed on first request."""
        if name not in self._parts:
            self._parts[name] = self._sections[name].compute(self)
        return self._parts[name]

    def memo(self, key, compute):
        """A value several sections share that is not in `Report.data` (the split-half rows)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def display_tables(data, builders, *, limit):
    """Tables cut to `limit` rows (None: every row), each knowing its full length."""
    tables = []
    for builder in builders:
        table = builder(data)
        table.total_rows = len(table.rows)
        if limit is not None:
            table.rows = table.rows[:limit]
        tables.append(table)
    return tables


def tables_present(*builders, page_rows=METRIC_ROWS, signed=False):
    """`present` of a section drawn as tables (templates/analysis/sections/tables.html); `signed`:
    its rows start with metric names, so the page lists their signatures under it."""

    def present(data):
        tables = display_tables(data, builders, limit=page_rows)
        once_on_the_page(tables, POPULATION_MARK)
        return {"tables": tables, "signed": signed}

    return present


POPULATION_MARK = " Population: "


def once_on_the_page(tables, mark):
    """Where the shown tables' notes all end in the same `mark`... sentence (a section's population), the
    page says it under the first of them and "as above" under the rest: read once, not eleven times. Each
    table's own page, CSV and LaTeX keep their whole note, since they are read alone."""
    shown = [table for table in tables if table.rows and mark in table.note]
    endings = {table.note[table.note.index(mark):] for table in shown}
    if len(shown) < 2 or len(endings) != 1:
        return
    for table in shown[1:]:
        table.note = table.note[: table.note.index(mark)] + f"{mark}as above."


def tables_nav(data, context):
    """One entry per table with rows, by its title."""
    return [(f"t-{table.name}", Truncator(table.title).chars(NAV_LABEL_CHARS)) for table in context["tables"]
            if table.rows]  # fmt: skip


TABLES_TEMPLATE = "analysis/sections/tables.html"
