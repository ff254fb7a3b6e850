"""The Create survey page as served (F05, F06, F07): the estimate's anchor, each dataset's systems
for the page's script, and Prolific marked unavailable on a server that cannot publish there."""

import json
import re

import pytest
from django.urls import reverse

from tests.annotation.studies_helpers import dataset_records, survey_form_fields
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def datasets(researcher, other_researcher):
    mine = load_dataset_records(records=dataset_records(3, ("alpha", "beta")), name="mine", owner=researcher)
    theirs = load_dataset_records(records=dataset_records(3, ("secret",)), name="theirs", owner=other_researcher)
    return mine, theirs


def page(client, **params):
    return client.get(reverse("annotation:survey_new"), params).content.decode()


def test_the_estimate_button_opens_the_page_at_the_estimate(researcher_client, datasets):
    body = page(researcher_client)
    assert 'name="estimate" value="1" formaction="#estimate"' in body
    form = survey_form_fields(datasets[0], name="x", provider="local", estimate="1")
    estimated = researcher_client.post(reverse("annotation:survey_new"), form).content.decode()
    assert '<section id="estimate" aria-labelledby="estimate-title">' in estimated


def test_the_dataset_select_carries_each_of_the_owners_datasets_systems(researcher_client, datasets):
    mine, _ = datasets
    select = re.search(r'<select name="dataset"[^>]*>', page(researcher_client)).group(0)
    systems = json.loads(re.search(r'data-systems="([^"]*)"', select).group(1).replace("&quot;", '"'))
    assert systems == {str(mine.pk): ["alpha", "beta"]}  # another researcher's dataset is not there


def test_prolific_is_shown_unavailable_on_a_server_without_its_token(researcher_client, datasets, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    body = page(researcher_client)
    option = re.search(r'<option value="prolific"[^>]*>[^<]*</option>', body).group(0)
    assert " disabled" in option and "not available on this server: no Prolific API token" in option
    assert "Prolific is not available on this server" in body


def test_prolific_is_selectable_where_the_server_is_set_up(researcher_client, datasets, monkeypatch, settings):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "prolific-test-token-not-a-secret")
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    option = re.search(r'<option value="prolific"[^>]*>[^<]*</option>', page(researcher_client)).group(0)
    assert option == '<option value="prolific">Prolific</option>'


@pytest.mark.parametrize("workspace", ["", "a-workspace"])
def test_the_researchers_help_names_no_server_variable_and_heads_prolifics_note(
    researcher_client, datasets, settings, workspace
):
    settings.PROLIFIC_WORKSPACE_ID = workspace
    body = page(researcher_client)
    for variable in ("PROLIFIC_CURRENCY", "PROLIFIC_WORKSPACE_ID", "PROLIFIC_API_TOKEN", "PUBLIC_BASE_URL"):
        assert variable not in body
    assert '<small class="muted" data-provider="prolific">Prolific only: On Prolific, in pence of GBP' in body


def test_a_refused_prolific_choice_is_shown_again_chosen_not_disabled(researcher_client, datasets, monkeypatch):
    # a disabled chosen option would be sent as no choice: the next press would make a built-in survey
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    form = survey_form_fields(datasets[0], name="on prolific", provider="prolific", reward_cents=100)
    body = researcher_client.post(reverse("annotation:survey_new"), form).content.decode()
    assert "Prolific is not set up on this server" in body
    option = re.search(r'<option value="prolific"[^>]*>', body).group(0)
    assert "selected" in option and "disabled" not in option
