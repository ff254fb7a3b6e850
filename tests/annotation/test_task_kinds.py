"""Design rule: task kinds are packages behind one interface, listed in one registry, and the shared
machinery asks a survey's kind instead of naming kinds (annotation/kinds/, issue 36)."""

import inspect
import re
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.template.loader import get_template

from annotation.kinds.base import TaskKind
from annotation.kinds.registry import KINDS, all_kinds, kind_for, kind_named
from annotation.models import Survey

ROOT = Path(__file__).resolve().parents[2]
# A kind named in code: a TaskType member, a task type compared with (or defaulted to) a literal, or a
# kind's value compared as a literal (`options["task_type"] != "pairwise"`).
NAMES_A_KIND = re.compile(
    r"TaskType\.(?!choices\b|values\b|labels\b)[A-Z_]+|task_type\s*(?:[!=]=|=)\s*[\"']|task_type\s+(?:not\s+)?in\s+[({\[]"
    rf"|[!=]=\s*[\"'](?:{'|'.join(Survey.TaskType.values)})[\"']"
)
# A template that branches on the task type instead of asking the kind (`survey|task_kind`).
TEMPLATE_NAMES_A_KIND = re.compile(r"task_type\s*[!=]=")
# Where kinds may be named: their own packages, the models that define the choices and migrations.
KIND_HOMES = ("annotation/kinds/", "annotation/models/", "annotation/migrations/")
# Shared modules that still name a kind, each with why; the test fails when one is fixed too, so the
# list only shrinks. Empty: every shared module asks the survey's kind.
NOT_YET = {}
# Shared templates that still branch on the task type, each with why (the same rule).
TEMPLATES_NOT_YET = {}


def _abstract_methods():
    """The interface's methods that a kind must give (the base raises NotImplementedError)."""
    return sorted(
        name
        for name, member in vars(TaskKind).items()
        if callable(member) and "raise NotImplementedError" in inspect.getsource(member)
    )


def test_the_registry_has_a_kind_for_every_survey_task_type():
    assert set(KINDS) == set(Survey.TaskType.values)
    for value in Survey.TaskType.values:
        kind = kind_named(value)
        assert isinstance(kind, TaskKind)
        assert kind.name == value
        assert kind_for(Survey(task_type=value)) is kind


def test_every_kind_gives_every_method_the_interface_leaves_to_it():
    missing = {
        kind.name: [name for name in _abstract_methods() if getattr(type(kind), name) is getattr(TaskKind, name)]
        for kind in all_kinds()
    }
    assert _abstract_methods(), "the interface names the methods a kind must give"
    assert missing == {kind.name: [] for kind in all_kinds()}


def test_every_kind_has_its_words_page_templates_and_script():
    words = set(kind_named(Survey.TaskType.RATE).wording)
    for kind in all_kinds():
        assert set(kind.wording) == words, kind.name
        templates = [kind.choice_template, *([kind.hint_template] if kind.hint_template else [])]
        for name in templates:
            assert get_template(name).origin.name.startswith(str(Path(settings.BASE_DIR, "templates")))
        assert finders.find(kind.page_script), kind.page_script


def test_the_pairwise_kind_declares_the_report_section_it_contributes():
    assert {kind.name: kind.report_section for kind in all_kinds()} == {
        Survey.TaskType.RATE: None,
        Survey.TaskType.PAIRWISE: "pairwise",
        Survey.TaskType.WRITE: None,
        Survey.TaskType.BWS: "bws",
        Survey.TaskType.CONVERSATION: "conversations",
        Survey.TaskType.ACUTE: "conversations",
        Survey.TaskType.CHAT: "conversations",
    }


def test_shared_machinery_names_no_kind():
    naming = {}
    for path in sorted((ROOT / "annotation").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(KIND_HOMES):
            continue
        found = NAMES_A_KIND.findall(path.read_text())
        if found:
            naming[relative] = found
    assert set(naming) == set(NOT_YET), naming


def test_shared_templates_ask_the_kind_instead_of_naming_it():
    naming = {}
    for path in sorted((ROOT / "templates" / "annotation").rglob("*.html")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("templates/annotation/kinds/"):
            continue
        if TEMPLATE_NAMES_A_KIND.search(path.read_text()):
            naming[relative] = TEMPLATE_NAMES_A_KIND.findall(path.read_text())
    assert set(naming) == set(TEMPLATES_NOT_YET), naming


def test_every_kind_method_takes_the_parameters_the_base_declares():
    """Shared code calls a kind through the base's signature (e.g. `estimated_seconds(..., survey=)`):
    a kind whose override lags behind a new base parameter fails only when that page is drawn."""
    lagging = []
    for kind in all_kinds():
        for name, method in inspect.getmembers(type(kind), inspect.isfunction):
            declared = getattr(TaskKind, name, None)
            if not inspect.isfunction(declared) or method is declared:
                continue
            if list(inspect.signature(method).parameters) != list(inspect.signature(declared).parameters):
                lagging.append(f"{type(kind).__name__}.{name}")
    assert lagging == []
