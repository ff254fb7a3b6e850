"""Task kinds and report sections meet by name only: a kind declares the section it contributes
(`TaskKind.report_section`), which the analysis layer registers (analysis/sections/registry.py);
annotation cannot import analysis to check it, so the check lives here (issue 36)."""

import re
from pathlib import Path

from analysis.sections.registry import BY_NAME, SECTIONS
from annotation.kinds.registry import all_kinds, task_types_reporting
from annotation.models import Survey

ROOT = Path(__file__).resolve().parents[2]


def test_every_kinds_report_section_is_a_registered_section():
    declared = {kind.name: kind.report_section for kind in all_kinds() if kind.report_section is not None}
    assert declared, "at least one kind contributes a section (pairwise)"
    unregistered = {name: section for name, section in declared.items() if section not in BY_NAME}
    assert unregistered == {}, f"registered sections: {[section.name for section in SECTIONS]}"


def test_a_sections_surveys_are_those_of_the_kinds_that_contribute_it():
    assert task_types_reporting("pairwise") == [Survey.TaskType.PAIRWISE]
    assert task_types_reporting("correlations") == []


def test_analysis_names_no_task_kind():
    # The report asks a survey's kind (`kind_for(survey).rates_responses`) or the kinds behind a
    # section (`task_types_reporting`) instead of naming a Survey.TaskType member.
    naming = {
        path.relative_to(ROOT).as_posix(): found
        for path in sorted((ROOT / "analysis").rglob("*.py"))
        if (found := re.findall(r"TaskType\.(?!choices\b|values\b|labels\b)[A-Z_]+", path.read_text()))
    }
    assert naming == {}
