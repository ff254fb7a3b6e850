"""Dataset and survey names are unique per owner: one researcher's names tell another nothing.

Commands that take a name refuse an ambiguous one, list its owners, and take --owner (or
--owner - for a row with no owner).
"""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotation import services
from annotation.models import Dataset, Survey
from scoring.adem.experiments import KINDS
from tests.annotation.studies_helpers import dataset_records, make_survey
from tests.factories import load_dataset_records, load_rating_records, records_to_jsonl

pytestmark = pytest.mark.django_db


def _upload(client, name):
    data = SimpleUploadedFile("d.jsonl", records_to_jsonl(dataset_records(3)), content_type="application/jsonl")
    return client.post(reverse("annotation:dataset_upload"), {"name": name, "file": data})


def test_a_researcher_may_use_a_dataset_name_another_researcher_has(client, researcher, other_researcher):
    load_dataset_records(records=dataset_records(3), name="demo", owner=researcher)
    client.force_login(other_researcher)
    response = _upload(client, "demo")
    assert response.status_code == 302, response.content.decode()[:500]
    assert sorted(Dataset.objects.filter(name="demo").values_list("owner__username", flat=True)) == ["alice", "bob"]


def test_the_same_owner_cannot_have_two_datasets_of_one_name(client, researcher):
    load_dataset_records(records=dataset_records(3), name="demo", owner=researcher)
    client.force_login(researcher)
    response = _upload(client, "demo")
    assert response.status_code == 200 and "already exists" in response.content.decode()
    assert Dataset.objects.filter(name="demo").count() == 1
    with pytest.raises(IntegrityError), transaction.atomic():
        Dataset.objects.create(name="demo", owner=researcher)


def _error_list(page, field):
    """The text of the error list the page shows beside `field` ("" when there is none)."""
    marker = f'<ul class="errorlist" id="id_{field}_error">'
    return page.split(marker, 1)[1].split("</ul>", 1)[0] if marker in page else ""


def test_a_taken_dataset_name_is_said_beside_the_name_not_the_file(client, researcher):
    load_dataset_records(records=dataset_records(3), name="demo", owner=researcher)
    client.force_login(researcher)
    page = _upload(client, "demo").content.decode()
    assert "A dataset of yours named &#x27;demo&#x27; already exists; choose another name." in _error_list(page, "name")
    assert _error_list(page, "file") == "" and Dataset.objects.count() == 1


def test_a_taken_survey_name_for_imported_ratings_is_said_beside_the_survey_name(client, researcher):
    dataset = load_dataset_records(records=dataset_records(3), name="demo", owner=researcher)
    make_survey(researcher, name="pilot", launch=False)
    rating = b'{"context_id": "c000", "system": "hred", "worker": "w1", "score": 3}\n'
    upload = SimpleUploadedFile("r.jsonl", rating, content_type="application/jsonl")
    client.force_login(researcher)
    url = reverse("annotation:ratings_upload", args=[dataset.pk])
    page = client.post(url, {"file": upload, "survey_name": "pilot", "scale_min": 1, "scale_max": 5}).content.decode()
    assert "A survey of yours named &#x27;pilot&#x27; already exists; choose another name." in _error_list(
        page, "survey_name"
    )
    assert _error_list(page, "file") == "" and Survey.objects.filter(name="pilot").count() == 1


def test_survey_names_are_free_across_owners_and_unique_for_one(client, researcher, other_researcher):
    make_survey(researcher, name="pilot", launch=False)
    theirs = load_dataset_records(records=dataset_records(6), name="bob-data", owner=other_researcher)
    client.force_login(other_researcher)
    form = {
        "dataset": theirs.pk,
        "name": "pilot",
        "task_type": "rate",
        "instructions": "Rate.",
        "contexts_per_hit": 3,
        "assignments_per_hit": 1,
        "attention_checks_per_hit": 0,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 10,
        "attention_policy": "flag",
    }
    response = client.post(reverse("annotation:survey_new"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    again = client.post(reverse("annotation:survey_new"), form).content.decode()
    assert "You already have a survey with this name." in again
    assert Survey.objects.filter(name="pilot").count() == 2
    with pytest.raises(services.SurveyError, match="already exists"):
        services.survey_create(dataset=theirs, name="pilot", owner=other_researcher)
    with pytest.raises(IntegrityError), transaction.atomic():
        Survey.objects.create(dataset=theirs, name="pilot", owner=other_researcher)


def test_imported_ratings_get_a_default_name_free_for_their_owner(researcher, other_researcher):
    rating = [{"context_id": "c000", "system": "hred", "worker": "w1", "score": 3}]
    mine = load_dataset_records(records=dataset_records(3), name="demo", owner=researcher)
    theirs = load_dataset_records(records=dataset_records(3), name="demo", owner=other_researcher)
    load_rating_records(records=rating, dataset=mine, survey_name=None)
    survey = load_rating_records(records=rating, dataset=theirs, survey_name=None)
    assert (survey.name, survey.owner) == ("demo-imported", other_researcher)


@pytest.fixture
def two_demos(researcher, other_researcher):
    """alice and bob each have a dataset `demo` with a survey `pilot` (and an MTurk survey `turk`)."""
    for owner in (researcher, other_researcher):
        survey = make_survey(owner, name="pilot", dataset_name="demo", n_contexts=6)
        Survey.objects.create(dataset=survey.dataset, name="turk", owner=owner, provider=Survey.Provider.MTURK)
    return Dataset.objects.get(name="demo", owner=researcher), Dataset.objects.get(name="demo", owner=other_researcher)


AMBIGUOUS_DATASET = [
    ("import_ratings", ["ratings.jsonl", "--dataset", "demo"]),
    ("export_dataset", ["--dataset", "demo"]),
    ("export_ratings", ["--dataset", "demo"]),
    ("create_survey", ["--dataset", "demo", "--name", "new"]),
    ("report", ["--dataset", "demo"]),
    ("compute_metrics", ["--dataset", "demo"]),
    ("train_adem", ["--dataset", "demo", "--name", "m"]),
    ("adem_experiment", [KINDS[0], "--dataset", "demo"]),
]
AMBIGUOUS_SURVEY = [
    ("survey_status", ["pilot"]),
    ("simulate_ratings", ["pilot"]),
    ("recompute_quality", ["pilot"]),
    ("mturk_sync", ["turk"]),
    ("mturk_expire", ["turk"]),
    ("mturk_publish", ["turk"]),
    ("mturk_review", ["turk"]),
    ("mturk_block", ["turk", "AWORKER", "--reason", "x"]),
    ("mturk_bonus", ["turk", "3ASG", "--amount", "1", "--reason", "x"]),
]


@pytest.mark.parametrize(
    ("command", "args", "noun"),
    [(*case, "dataset") for case in AMBIGUOUS_DATASET] + [(*case, "survey") for case in AMBIGUOUS_SURVEY],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_command_refuses_an_ambiguous_name_listing_its_owners(two_demos, command, args, noun):
    with pytest.raises(CommandError) as refused:
        call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())
    message = str(refused.value)
    assert f"the {noun} name" in message and "is ambiguous" in message, message
    assert "owners: alice, bob" in message and "--owner" in message


def test_owner_picks_the_dataset_and_survey_of_that_researcher(two_demos, outsider):
    _, bobs = two_demos
    out = io.StringIO()
    call_command("export_dataset", "--dataset", "demo", "--owner", "bob", stdout=out)
    assert out.getvalue().count("\n") == bobs.contexts.count() == 6
    out = io.StringIO()
    call_command("survey_status", "pilot", "--owner", "alice", "--json", stdout=out)
    assert '"survey": "pilot"' in out.getvalue()
    call_command(
        "create_survey",
        "--dataset",
        "demo",
        "--owner",
        "bob",
        "--name",
        "second",
        stderr=io.StringIO(),
        stdout=io.StringIO(),
    )
    assert Survey.objects.get(name="second").dataset == bobs
    with pytest.raises(CommandError, match="no dataset named 'demo' owned by 'mallory'"):
        call_command("export_dataset", "--dataset", "demo", "--owner", "mallory", stdout=io.StringIO())


def test_a_dataset_with_no_owner_is_named_with_owner_dash(two_demos):
    load_dataset_records(records=dataset_records(2), name="demo", owner=None)
    out = io.StringIO()
    call_command("export_dataset", "--dataset", "demo", "--owner", "-", stdout=out)
    assert out.getvalue().count("\n") == 2
    with pytest.raises(CommandError, match=r"owners: \(no owner: --owner -\), alice, bob"):
        call_command("export_dataset", "--dataset", "demo", stdout=io.StringIO())


def test_a_unique_name_needs_no_owner(researcher):
    make_survey(researcher, name="only", dataset_name="lonely", n_contexts=3)
    out = io.StringIO()
    call_command("export_dataset", "--dataset", "lonely", stdout=out)
    assert out.getvalue().count("\n") == 3
