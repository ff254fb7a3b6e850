"""The report's sections, in the order the report page shows them. Adding a section: a module of
this package ending with `SECTION = Section(...)` (see `base.py`) and one line here.

The JSON (`Report.data`), the CSV tables and the LaTeX tables follow this order too; a section that
needs another's figures asks for them (`ReportContext.part`), so the order is the reader's, not
the computation's. The learned-metric and signature sections have no place of their own on the
page: the tables of metrics carry their notes and signatures.
"""

from analysis.sections import (
    agreement,
    alt_test,
    arena,
    bws,
    conversations,
    correlations,
    failure_analysis,
    human_ceiling,
    judge_calibration,
    judge_cost,
    judges,
    learned,
    length_bias,
    pairwise,
    pairwise_accuracy,
    pairwise_sensitivity,
    planning,
    plots,
    ranking,
    sensitivity,
    signatures,
    stopwords,
    system_level,
    williams,
    wmt,
)

SECTIONS = (
    human_ceiling.SECTION,
    ranking.SECTION,
    wmt.SECTION,
    correlations.SECTION,
    system_level.SECTION,
    pairwise_accuracy.SECTION,
    planning.SECTION,
    williams.SECTION,
    length_bias.SECTION,
    stopwords.SECTION,
    failure_analysis.SECTION,
    agreement.SECTION,
    sensitivity.SECTION,
    pairwise.SECTION,
    arena.SECTION,
    pairwise_sensitivity.SECTION,
    conversations.SECTION,
    bws.SECTION,
    judges.SECTION,
    alt_test.SECTION,
    judge_calibration.SECTION,
    judge_cost.SECTION,
    plots.SECTION,
    learned.SECTION,
    signatures.SECTION,
)
BY_NAME = {section.name: section for section in SECTIONS}

# Every CSV table of the report (the zip's files, `manage.py report --table`), in page order.
TABLES = tuple(name for section in SECTIONS for name in section.tables)
EXPORTS = {name: builder for section in SECTIONS for name, builder in section.tables.items()}


def section(name):
    """The registered section `name` (KeyError when there is none)."""
    return BY_NAME[name]


def page_table(name, *, full=False):
    """`(builder, rows on the page)` of the page table `name`; `full`: the "show all" page's
    (every pair under Williams' and the ranking's compact tables). None when no section has it."""
    for registered in SECTIONS:
        if name in registered.page_tables:
            builder = registered.full_tables.get(name) if full else None
            return builder or registered.page_tables[name], registered.page_rows
    return None
