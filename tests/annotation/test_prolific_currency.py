"""Prolific's floor is judged in the currency a study is paid in: the workspace's, GBP or USD.

Prolific requires at least £6.00 / $8.00 an hour at the median time
(https://researcher-help.prolific.com/hc/en-gb/articles/4407695146002-Prolific-s-payment-principles)
and takes the reward in the workspace currency's minor unit. The form knows the server's currency
from PROLIFIC_CURRENCY; publishing asks Prolific for the workspace's `currency_code`
(`GET workspaces/{id}/balance/`, https://docs.prolific.com/api-reference/workspaces/get-workspace-balance),
faked here with respx at that one point, when PROLIFIC_WORKSPACE_ID names the workspace.
"""

import json
import re

import httpx
import pytest

from annotation import services
from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.pay import currency_problem, floor_problem, min_reward_cents
from annotation.models import ProlificStudy, Survey
from tests.annotation.prolific_helpers import STUDY_ID, make_prolific_survey, study_answer, workspace_balance
from tests.annotation.studies_helpers import survey_form_fields
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

WORKSPACE_ID = "64a0b1c2d3e4f5a6b7c8d9e0"


@pytest.fixture
def dataset(researcher):
    records = [{"context_id": f"c{i}", "context": ["Hi!"], "responses": [{"system": "s1", "text": f"hi {i}"}]}
               for i in range(3)]  # fmt: skip
    return load_dataset_records(records=records, name="currency-data", owner=researcher)


def prolific_form(dataset, reward_cents):
    return survey_form_fields(dataset, name="paid", provider="prolific", reward_cents=reward_cents)


def unescaped(response):
    return response.content.decode().replace("&#x27;", "'").replace("&quot;", '"')


# --- the rule in numbers ------------------------------------------------------------------------


def test_the_least_reward_for_ten_minutes_is_100_pence_or_134_cents():
    assert (min_reward_cents(10, "GBP"), min_reward_cents(10, "USD")) == (100, 134)
    assert floor_problem(134, 10, "USD") == "" and floor_problem(100, 10, "GBP") == ""
    assert "$6.00 an hour, under Prolific's floor of $8.00 an hour" in floor_problem(100, 10, "USD")


def test_a_reward_set_in_pence_for_a_dollar_workspace_is_named_with_both_figures():
    problem = currency_problem(100, 10, set_in="GBP", paid_in="USD")
    assert "pays in USD, but this study's reward is set in GBP" in problem
    assert "Prolific would pay $1.00 per participant, not £1.00" in problem
    assert "$6.00 an hour, under Prolific's floor of $8.00 an hour; pay at least $1.34" in problem
    assert currency_problem(100, 10, set_in="USD", paid_in="USD") == ""


# --- the survey form ------------------------------------------------------------------------------


def test_a_dollar_server_refuses_100_cents_on_the_form_with_dollar_figures(
    researcher_client, dataset, prolific_env, settings
):
    settings.PROLIFIC_CURRENCY = "USD"
    response = researcher_client.post("/surveys/new/", prolific_form(dataset, 100))
    text = unescaped(response)
    assert response.status_code == 200 and not Survey.objects.filter(name="paid").exists()
    assert "Prolific would refuse this study: A reward of $1.00 for 10 minutes" in text
    assert "$6.00 an hour, under Prolific's floor of $8.00 an hour" in text
    assert "Give at least 134 (cents of USD)" in text and "£" not in text.split("Prolific would refuse")[1][:400]


def test_a_dollar_server_accepts_134_cents_and_the_study_is_kept_in_dollars(
    researcher_client, dataset, prolific_env, settings
):
    settings.PROLIFIC_CURRENCY = "USD"
    response = researcher_client.post("/surveys/new/", prolific_form(dataset, 134))
    assert response.status_code == 302
    study = ProlificStudy.objects.get(survey__name="paid")
    assert (study.reward_cents, study.currency) == (134, "USD")


def test_a_pound_server_accepts_100_pence_and_keeps_the_study_in_pounds(researcher_client, dataset, prolific_env):
    response = researcher_client.post("/surveys/new/", prolific_form(dataset, 100))
    assert response.status_code == 302
    study = ProlificStudy.objects.get(survey__name="paid")
    assert (study.reward_cents, study.currency) == (100, "GBP")


@pytest.mark.parametrize("case", [("GBP", "pence", 100, "£6.00"), ("USD", "cents", 134, "$8.00")], ids=["GBP", "USD"])
def test_the_form_offers_the_floor_in_the_servers_currency_and_says_it_is_not_checked_without_a_workspace(
    researcher_client, dataset, settings, case
):
    currency, unit, least, floor = case
    settings.PROLIFIC_CURRENCY, settings.PROLIFIC_WORKSPACE_ID = currency, ""
    text = unescaped(researcher_client.get(f"/surveys/new/?dataset={dataset.pk}"))
    field = re.search(r'<input[^>]*id="id_reward_cents"[^>]*>', text).group(0)
    assert f'data-prolific-min="{least}"' in field
    assert f"On Prolific, in {unit} of {currency}, the currency this server's Prolific workspace pays in" in text
    assert f"Prolific pays at least {floor} an hour" in text and f"at least {least} {unit}" in text
    assert "RateLab cannot ask Prolific which currency your workspace pays in" in text


def test_the_form_says_publishing_checks_the_currency_when_the_workspace_is_named(researcher_client, dataset, settings):
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE_ID
    text = unescaped(researcher_client.get(f"/surveys/new/?dataset={dataset.pk}"))
    assert "Publishing checks this currency against your Prolific workspace's." in text
    assert "RateLab cannot ask Prolific" not in text


# --- publishing: Prolific's workspace decides ---------------------------------------------------


@pytest.fixture
def draft(researcher, api, settings):
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE_ID
    survey = make_prolific_survey(researcher, reward_cents=100, minutes=10)
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    survey.refresh_from_db()
    return survey


def workspace_pays_in(api, currency):
    return api.get(f"workspaces/{WORKSPACE_ID}/balance/").mock(
        return_value=httpx.Response(200, json=workspace_balance(currency=currency))
    )


def prolific_publishes(api):
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json=study_answer(status="ACTIVE"))
    )
    return created


def test_a_pound_reward_is_not_sent_to_a_dollar_workspace_and_nothing_changes(draft, api):
    balance, created = workspace_pays_in(api, "USD"), prolific_publishes(api)
    with pytest.raises(ProviderError) as refused:
        services.survey_launch(survey=draft)
    message = str(refused.value)
    assert "Your Prolific workspace pays in USD, but this study's reward is set in GBP" in message
    assert "Prolific would pay $1.00 per participant, not £1.00" in message
    assert "under Prolific's floor of $8.00 an hour; pay at least $1.34" in message
    assert "Choose USD and a reward in USD on the survey's Prolific page" in message
    assert balance.call_count == 1 and created.call_count == 0
    study = ProlificStudy.objects.get(survey=draft)
    assert (study.study_id, study.currency, study.reward_cents, study.draft_attempts) == ("", "GBP", 100, 0)
    assert Survey.objects.get(pk=draft.pk).status == Survey.Status.DRAFT


def test_a_dollar_reward_over_the_dollar_floor_is_published_in_a_dollar_workspace(draft, api):
    ProlificStudy.objects.filter(survey=draft).update(currency="USD", reward_cents=134)
    workspace_pays_in(api, "USD")
    created = prolific_publishes(api)
    services.survey_launch(survey=draft)
    assert created.call_count == 1 and json.loads(created.calls[0].request.content)["reward"] == 134
    assert Survey.objects.get(pk=draft.pk).status == Survey.Status.LIVE


def test_a_dollar_reward_under_the_dollar_floor_is_refused_before_prolific_is_asked(draft, api):
    ProlificStudy.objects.filter(survey=draft).update(currency="USD", reward_cents=100)
    balance, created = workspace_pays_in(api, "USD"), prolific_publishes(api)
    with pytest.raises(ProviderError, match=r"\$6.00 an hour, under Prolific's floor of \$8.00 an hour"):
        services.survey_launch(survey=draft)
    assert (balance.call_count, created.call_count) == (0, 0)


def test_a_pound_reward_is_published_in_a_pound_workspace(draft, api):
    balance, created = workspace_pays_in(api, "GBP"), prolific_publishes(api)
    services.survey_launch(survey=draft)
    assert (balance.call_count, created.call_count) == (1, 1)


def test_without_a_workspace_the_currency_is_taken_as_set_and_prolific_is_not_asked(draft, api, settings):
    settings.PROLIFIC_WORKSPACE_ID = ""
    balance, created = workspace_pays_in(api, "USD"), prolific_publishes(api)
    services.survey_launch(survey=draft)
    assert (balance.call_count, created.call_count) == (0, 1)


def test_a_workspace_prolific_will_not_read_stops_the_launch_with_prolifics_words(draft, api):
    api.get(f"workspaces/{WORKSPACE_ID}/balance/").mock(
        return_value=httpx.Response(404, json={"error": {"detail": "Workspace not found."}})
    )
    created = prolific_publishes(api)
    with pytest.raises(ProviderError, match="Workspace not found"):
        services.survey_launch(survey=draft)
    assert created.call_count == 0


# --- the Prolific page --------------------------------------------------------------------------


def test_the_prolific_page_says_whether_publishing_checks_the_chosen_currency(researcher_client, draft, settings):
    url = f"/surveys/{draft.pk}/prolific/"
    text = unescaped(researcher_client.get(url))
    assert "Prolific pays in your workspace's currency" in text and "this server's is GBP" in text
    assert "Publishing checks it against the workspace and refuses a mismatch." in text
    settings.PROLIFIC_WORKSPACE_ID, settings.PROLIFIC_CURRENCY = "", "USD"
    text = unescaped(researcher_client.get(url))
    assert "this server's is USD" in text and "RateLab cannot check it" in text
