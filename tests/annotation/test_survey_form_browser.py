"""The survey form in real headless Chromium: as the task type changes, the question and the
instructions follow it (a comparison or writing task is not introduced with the rating texts),
except where the researcher wrote their own; what is saved is the task type's own."""

import re

import pytest

from annotation.kinds.pairwise.page import PAIRWISE_QUESTION
from annotation.kinds.writing.kind import WRITE_INSTRUCTIONS
from annotation.models import Survey
from annotation.services.surveys import instructions_by_type
from tests.annotation.studies_helpers import dataset_records
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A survey's own page: digits, so the form's "/surveys/new/" (where the click starts) never matches
# and the wait really waits for Create's redirect.
SURVEY_PAGE = re.compile(r"/surveys/\d+/$")


def _form(browser, live_server, researcher, width):
    page = browser.new_context(viewport={"width": width, "height": 844}).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"{live_server.url}/surveys/new/")
    return page


def test_the_texts_follow_the_task_type_unless_the_researcher_wrote_their_own(live_server, browser, researcher):
    dataset = load_dataset_records(records=dataset_records(4), name="texts", owner=researcher)
    page = _form(browser, live_server, researcher, 390)
    rating = instructions_by_type()["rate"]
    assert page.input_value("#id_instructions") == rating
    page.select_option("#id_task_type", "pairwise")
    assert page.input_value("#id_question") == PAIRWISE_QUESTION
    assert "reply 1 and reply 2" in page.input_value("#id_instructions")
    page.select_option("#id_task_type", "write")
    assert page.input_value("#id_instructions") == WRITE_INSTRUCTIONS
    page.select_option("#id_task_type", "rate")
    assert page.input_value("#id_instructions") == rating
    page.fill("#id_instructions", "Our own words.")
    page.select_option("#id_task_type", "pairwise")
    assert page.input_value("#id_instructions") == "Our own words."  # the researcher's text stays

    page.fill("#id_instructions", "")
    page.select_option("#id_task_type", "rate")
    page.select_option("#id_task_type", "pairwise")  # an emptied field takes the type's default again
    page.select_option("#id_dataset", str(dataset.pk))
    page.fill("#id_name", "ab")
    page.uncheck("#id_allow_tie")
    page.click("#create-survey")
    page.wait_for_url(SURVEY_PAGE)
    survey = Survey.objects.get(name="ab")
    # the form showed the version with ties; without them the saved text offers no "about the same"
    assert survey.instructions == instructions_by_type(allow_tie=False)["pairwise"]
    assert survey.aspects.get(key="overall").question == PAIRWISE_QUESTION


def test_fields_only_another_task_type_reads_are_hidden_until_that_type_is_chosen(live_server, browser, researcher):
    load_dataset_records(records=dataset_records(4), name="fields", owner=researcher)
    page = _form(browser, live_server, researcher, 390)

    def visible(field_id):
        return page.is_visible(f"#{field_id}")

    assert visible("id_aspects") and not visible("id_allow_tie") and not visible("id_pair_budget")
    assert not visible("id_write_system_name")
    page.select_option("#id_task_type", "pairwise")
    assert visible("id_allow_tie") and visible("id_max_position_bias") and not visible("id_write_system_name")
    page.select_option("#id_task_type", "write")
    assert visible("id_write_system_name") and not visible("id_allow_tie")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    # A write survey without its system is refused: the page comes back with the field shown, its
    # message beside it, whatever the type a script would pick.
    page.fill("#id_name", "no-system")
    page.click("#create-survey")
    page.wait_for_selector("#form-errors")
    assert visible("id_write_system_name") and "needs the system name" in page.inner_text("#form-errors")
    assert not Survey.objects.filter(name="no-system").exists()


def test_choosing_prolific_raises_a_default_reward_to_prolifics_floor_and_back(
    live_server, browser, researcher, monkeypatch, settings
):
    # Prolific refuses 50 pence for the 10 minutes a new study is estimated at (£3 an hour): a
    # researcher who keeps the defaults gets a reward Prolific accepts; one they typed is theirs.
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "prolific-test-token-not-a-secret")
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    dataset = load_dataset_records(records=dataset_records(4), name="paid", owner=researcher)
    page = _form(browser, live_server, researcher, 1366)
    assert page.input_value("#id_reward_cents") == "50"
    assert not page.is_visible("[data-provider=prolific]")
    page.select_option("#id_provider", "prolific")
    assert page.input_value("#id_reward_cents") == "100"
    assert page.is_visible("[data-provider=prolific]")  # Prolific's pay floor, only once it is chosen
    page.select_option("#id_provider", "local")
    assert page.input_value("#id_reward_cents") == "50"
    assert not page.is_visible("[data-provider=prolific]")
    page.fill("#id_reward_cents", "250")
    page.select_option("#id_provider", "prolific")
    assert page.input_value("#id_reward_cents") == "250"
    page.fill("#id_reward_cents", "50")
    page.select_option("#id_provider", "local")
    page.select_option("#id_provider", "prolific")
    page.select_option("#id_dataset", str(dataset.pk))
    page.fill("#id_name", "on prolific")
    page.click("#create-survey")
    page.wait_for_url(SURVEY_PAGE)
    assert Survey.objects.get(name="on prolific").reward_cents == 100


def test_choosing_a_dataset_shows_its_systems_as_checkboxes_at_once(live_server, browser, researcher):
    load_dataset_records(records=dataset_records(4, ("alpha", "beta")), name="first", owner=researcher)
    records = dataset_records(4, ("gamma", "delta", "eps"))
    second = load_dataset_records(records=records, name="walk-study", owner=researcher)
    page = _form(browser, live_server, researcher, 1366)
    assert page.is_visible("input#id_systems[type=text]")  # no dataset chosen yet: typed names
    page.select_option("#id_dataset", str(second.pk))
    boxes = page.locator("[data-field=systems] input[type=checkbox]")
    assert [boxes.nth(i).get_attribute("value") for i in range(boxes.count())] == ["delta", "eps", "gamma"]
    assert "Systems of walk-study" in page.inner_text("[data-field=systems]")
    page.check("text=gamma")
    page.check("text=eps")
    page.fill("#id_name", "two systems")
    page.click("#create-survey")
    page.wait_for_url(SURVEY_PAGE)
    survey = Survey.objects.get(name="two systems")
    assert sorted(survey.systems.values_list("name", flat=True)) == ["eps", "gamma"]


def test_the_estimate_opens_in_view_and_prolific_is_unavailable_without_a_token(
    live_server, browser, researcher, tmp_path, monkeypatch
):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    dataset = load_dataset_records(records=dataset_records(4), name="estimated", owner=researcher)
    shots = tmp_path
    for width, height in ((1366, 900), (390, 844)):
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", researcher.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}/surveys/new/")
        prolific_note = page.locator("[data-provider=prolific]")
        assert prolific_note.count() == 1 and not prolific_note.is_visible()  # the built-in link is chosen
        option = page.locator("#id_provider option[value=prolific]")
        assert option.is_disabled() and "not available on this server" in option.inner_text()  # no token here
        page.select_option("#id_dataset", str(dataset.pk))
        page.fill("#id_name", "estimate me")
        page.click("button[name=estimate]")
        page.wait_for_selector("#estimate")
        assert page.url.endswith("#estimate")
        box = page.locator("#estimate").bounding_box()
        assert 0 <= box["y"] < height  # in the window, not below the fold
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        page.screenshot(path=str(shots / f"estimate-{width}.png"))
