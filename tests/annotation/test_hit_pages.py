"""Stored HIT pages: rendered once at launch, served to every process, never stale, never wrong."""

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import HIT, HITItem, HITPage
from annotation.views.task_page import display as task_display
from annotation.views.task_page import stored as hit_pages
from annotation.views.task_page.stored import hit_pages_render, page_version
from tests.annotation.link_helpers import start_task, task_page
from tests.annotation.live_annotator import ACTION_RE
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

ITEM_IDS_RE = re.compile(r'data-item="(\d+)"')


def _items_section(html):
    """The part of a HIT page the stored HTML fills: from the first block to the end of the last."""
    return html[html.index('<section class="task-block"') : html.rindex("</section>") + len("</section>")]


@pytest.fixture
def launch(researcher, django_capture_on_commit_callbacks):
    """A launched survey with what the launch queues after its commit (the page render) run."""

    def launched(**settings):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            survey = make_survey(researcher, **settings)
        assert callbacks, "the launch queued the render"
        return survey

    return launched


@pytest.fixture(autouse=True)
def empty_process_cache():
    # Each process's own cache would answer before the stored page is looked at.
    cache.clear()
    yield
    cache.clear()


def test_launch_stores_every_hits_page_and_a_rerun_renders_nothing(launch):
    survey = launch(n_contexts=12, contexts_per_hit=3)
    hits = HIT.objects.filter(survey=survey).count()
    assert hits == 4
    pages = HITPage.objects.filter(hit__survey=survey)
    assert pages.count() == hits and {p.version for p in pages} == {page_version()}
    for page in pages:
        shown = [int(i) for i in ITEM_IDS_RE.findall(page.html)]
        assert shown == list(page.hit.items.order_by("position").values_list("pk", flat=True))
        assert page.n_items == len(shown) and not page.has_overlap
    assert hit_pages_render(survey=survey) == 0, "pages of the current version are not rendered again"


def test_the_link_serves_the_stored_page_without_reading_or_rendering_items(launch, monkeypatch):
    survey = launch(n_contexts=12, contexts_per_hit=3)
    page = HITPage.objects.get(hit__survey=survey, hit__position=0)

    def no_render(**kwargs):
        raise AssertionError("the stored page should have been used")

    monkeypatch.setattr(task_display, "hit_blocks", no_render)
    annotator = Client()
    url = start_task(annotator, survey, "w1")
    with CaptureQueriesContext(connection) as captured:
        response = annotator.get(url)
    assert response.status_code == 200
    assert _items_section(response.content.decode()) == page.html.strip()
    assert not any(HITItem._meta.db_table in q["sql"] for q in captured), "no item was read"
    statements = [q["sql"] for q in captured if not re.match(r"^(BEGIN|COMMIT|SAVEPOINT|RELEASE)", q["sql"])]
    # The task with its survey, annotator and progress, then the HIT's stored page.
    assert len(statements) <= 2, statements


def test_stored_and_live_pages_are_the_same_html(launch):
    survey = launch(n_contexts=12, contexts_per_hit=3, assignments_per_hit=2)
    stored = _items_section(task_page(Client(), survey, "w1").content.decode())
    HITPage.objects.all().delete()
    cache.clear()
    live = _items_section(task_page(Client(), survey, "w2").content.decode())
    assert live == stored, "the second annotator of HIT 1 sees what the first saw"
    # The live render kept the page for every other process.
    assert HITPage.objects.filter(hit__survey=survey, hit__position=0, version=page_version()).exists()


def test_a_page_of_another_version_is_never_shown_and_is_rendered_again(launch):
    survey = launch(n_contexts=12, contexts_per_hit=3)
    HITPage.objects.filter(hit__survey=survey).update(version="from-an-older-deploy", html="<p>stale items</p>")
    html = task_page(Client(), survey, "w1").content.decode()
    assert "stale items" not in html and 'class="task-block"' in html
    renewed = HITPage.objects.get(hit__survey=survey, hit__position=0)
    assert renewed.version == page_version() and "stale items" not in renewed.html
    assert hit_pages_render(survey=survey) == 3, "the other outdated pages are rendered again"


def test_dataset_text_stays_escaped_in_stored_pages(launch):
    survey = launch(n_contexts=6, contexts_per_hit=3)
    response = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.RESPONSE).first().response
    response.text = '<script>alert("x")</script> & more'
    response.save()
    HITPage.objects.all().delete()
    assert hit_pages_render(survey=survey) == 2
    html = HITPage.objects.get(hit__survey=survey, hit__position=0).html
    assert "<script>" not in html and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more" in html


def test_overlap_items_an_annotator_rated_elsewhere_stay_off_their_page(launch):
    survey = launch(n_contexts=11, contexts_per_hit=3, overlap_contexts=2, assignments_per_hit=2)
    assert HITPage.objects.filter(hit__survey=survey, has_overlap=True).exists()
    annotator = Client()
    first = task_page(annotator, survey, "w1").content.decode()
    token = ACTION_RE.search(first).group(1).strip("/").rsplit("/", 1)[-1]
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    assert assignment.token == token
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))

    second = task_page(annotator, survey).content.decode()
    held = services.assignment_claim(survey=survey, worker_id="w1")
    assert not held.first_in_survey
    expected = [item.pk for item in services.assignment_items(assignment=held)]
    assert [int(i) for i in ITEM_IDS_RE.findall(second)] == expected
    stored = HITPage.objects.get(hit=held.hit)
    if stored.has_overlap:
        assert len(expected) < stored.n_items, "the overlap items they rated are left off"


def test_a_new_annotator_gets_the_stored_page_of_a_hit_with_overlap_items(launch, monkeypatch):
    survey = launch(n_contexts=11, contexts_per_hit=3, overlap_contexts=2, assignments_per_hit=2)
    page = HITPage.objects.get(hit__survey=survey, hit__position=0)
    assert page.has_overlap
    monkeypatch.setattr(task_display, "hit_blocks", pytest.fail)
    html = task_page(Client(), survey, "newcomer").content.decode()
    assert _items_section(html) == page.html.strip()


def test_stored_page_lookup_needs_the_claims_word_for_overlap(launch):
    survey = launch(n_contexts=11, contexts_per_hit=3, overlap_contexts=2, assignments_per_hit=2)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    page = hit_pages.stored_page(assignment.hit)
    assert page is not None and page.n_items > 0
    assert hit_pages.page_holds_for(page, assignment)
    assignment.first_in_survey = False
    assert not hit_pages.page_holds_for(page, assignment), "without it, overlap items may have to drop off"


def test_a_live_render_beside_a_current_stored_page_writes_nothing(launch):
    survey = launch(n_contexts=11, contexts_per_hit=3, overlap_contexts=2, assignments_per_hit=2)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    assignment.first_in_survey = False  # as for a returning annotator: the page is rendered live
    with CaptureQueriesContext(connection) as captured:
        context = task_display.task_context(survey=survey, assignment=assignment)
    assert context["n_items"] == HITPage.objects.get(hit=assignment.hit).n_items, "they rated nothing elsewhere"
    assert not any(q["sql"].startswith("INSERT") for q in captured), "the stored page is current: no write"
