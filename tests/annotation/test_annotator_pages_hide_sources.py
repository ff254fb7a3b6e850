"""Annotator pages never show which system wrote a reply, the dataset's references, or which
block is an attention check: every kind of task page (rating with gold and with instructed checks,
pairwise with its gold pair and swapped repeat, reply writing), its start and done pages, and the
MTurk page. The systems and references have names found nowhere else, so a leak in any markup,
attribute or script shows."""

import pytest
from django.test import Client

from annotation import services
from annotation.models import Assignment
from tests.annotation import mturk_helpers
from tests.annotation.link_helpers import start_task
from tests.annotation.studies_helpers import dataset_records
from tests.annotation.test_gold_block_shape import GOLD
from tests.annotation.test_mturk_forging import visit
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

SYSTEMS = ("sysalpha", "sysbeta", "sysgamma")
REFERENCE = "secret reference"  # every reference of dataset_records begins so
# Words naming what an item is to the researcher: in no attribute, class, id or text of a task page.
ITEM_KINDS = ("gold", "filler", "instructed", "repeat", "broken", "accepted")


def leaks(html):
    low = html.lower()
    return [word for word in (*SYSTEMS, REFERENCE, *ITEM_KINDS) if word in low]


def annotator_pages(owner, kind, **settings):
    """The start page, the task page and (after submitting) the done page of a task of `kind`."""
    dataset = load_dataset_records(records=dataset_records(6, systems=SYSTEMS), name=f"ds-{kind}", owner=owner)
    survey = services.survey_create(dataset=dataset, name=kind, owner=owner, contexts_per_hit=3, **settings)
    survey = services.survey_launch(survey=survey)
    client = Client()
    pages = {"start": client.get(f"/s/{survey.token}/").content.decode()}
    url = start_task(client, survey, f"w-{kind}")
    pages["task"] = client.get(url).content.decode()
    assignment = Assignment.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED)
    pages["done"] = client.get(f"{url}done/").content.decode()
    return pages


@pytest.mark.parametrize(
    "kind, options",
    [
        ("rating-gold", {"gold_checks": GOLD, "attention_checks_per_hit": 2}),
        ("rating-instructed", {"attention_checks_per_hit": 2}),
        ("pairwise", {"task_type": "pairwise", "attention_checks_per_hit": 2}),
        ("write", {"task_type": "write", "write_system_name": "people"}),
    ],
)
def test_no_annotator_page_names_a_system_a_reference_or_a_check(researcher, kind, options):
    pages = annotator_pages(researcher, kind, **options)
    assert "hello number" in pages["task"], "the task page shows the task"
    for page, html in pages.items():
        assert leaks(html) == [], f"the {kind} {page} page shows {leaks(html)}"


def test_the_mturk_task_page_names_no_system_and_no_reference(client, researcher, monkeypatch, settings):
    mturk_helpers.install_stub(monkeypatch, settings)
    survey = mturk_helpers.make_survey(researcher, n_hits=1)
    survey.hits.update(external_id=mturk_helpers.hit_id(0))  # as publishing leaves it
    page = visit(client, survey, assignment="3ASGPAGE", worker="AWORKERPAGE").content.decode()
    assert "i am fine 0" in page, "the page shows the HIT's replies"
    for secret in ("hred", "tfidf", "fine thanks"):  # the helper's systems and reference
        assert secret not in page
