"""An annotator on a phone (390x844) in real headless Chromium: consent accepted, the pre-task
questionnaire (a missing answer named, then answered), a task, the closing questionnaire; a second
annotator declines and is given no work. Every page fits the phone; the researcher's pages (survey
page panel, deletion page, quality summary, the survey form's section) fit a desktop and a phone.
Screenshots go to $CONSENT_SHOTS when set."""

import os
import re
from pathlib import Path

import pytest

from annotation.models import Assignment, ConsentResponse, QuestionnaireResponse
from annotation.services import consent as consent_service
from annotation.services.questionnaire_spec import parse_questions
from tests.annotation.browser_pages import DESKTOP, PHONE, answer_all, fits
from tests.annotation.studies_helpers import make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRE = """single | age | Your age group | 18–29; 30–44; 45–64; 65 or older
multi | langs | Languages you speak well | English; German; French; Another language
scale | fluency | How well do you read English? | not at all; like a native speaker
text | job | Your occupation
number | years | For how many years have you used chatbots? | 0-50"""
POST = """scale | effort | How hard was the task? | very easy; very hard
text | comment | Anything we should know?"""


def _shot(page, name):
    folder = os.environ.get("CONSENT_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _survey(owner):
    survey = make_survey(owner, n_contexts=4, contexts_per_hit=2, assignments_per_hit=2, attention_checks_per_hit=0)
    consent_service.consent_setup_save(
        survey=survey,
        consent_text="This study by the RateLab team asks you to rate chatbot replies.\n\nWe record your ratings "
        "and your answers to a few questions under a pseudonym. You may stop at any time and ask us to delete "
        "your answers.",
        consent_version="2026-11",
        pre_questions=parse_questions(PRE),
        post_questions=parse_questions(POST),
    )
    return survey


def test_an_annotator_accepts_answers_both_questionnaires_and_works_on_a_phone(live_server, browser, researcher):
    survey = _survey(researcher)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/consent/$"))
    assert fits(page) and "Version 2026-11" in page.content()
    assert not Assignment.objects.filter(annotator__isnull=False).exists(), "nothing claimed before consent"
    _shot(page, "consent-390.png")
    page.click("#consent-accept")
    page.wait_for_url(re.compile(r"/questions/pre/$"))
    assert fits(page)
    _shot(page, "pre-questionnaire-390.png")
    page.click("text=30–44")
    page.click("text=English")
    page.click("text=French")
    page.click("#questionnaire-submit")  # three questions left unanswered: named, nothing stored
    page.wait_for_selector("#questionnaire-errors")
    assert page.locator(".question.missing").count() == 3 and QuestionnaireResponse.objects.count() == 0
    assert page.is_checked('input[name="q_age"][value="30–44"]'), "answers given are kept"
    _shot(page, "pre-questionnaire-missing-390.png")
    page.click('#question-fluency label.q-option:has-text("4")')
    page.click("#question-job label.q-skip")
    page.fill('input[name="q_years"]', "3")
    page.click("#questionnaire-submit")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page)
    assert QuestionnaireResponse.objects.get(phase="pre").answers == {
        "age": "30–44",
        "langs": ["English", "French"],
        "fluency": 4,
        "job": None,
        "years": 3,
    }
    answer_all(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert fits(page)
    _shot(page, "done-with-closing-questions-390.png")
    page.click("#post-questionnaire")
    page.wait_for_url(re.compile(r"/questions/post/$"))
    _shot(page, "post-questionnaire-390.png")
    page.click('#question-effort label.q-option:has-text("2")')
    page.fill('input[name="q_comment"]', "=1+1 <script>alert(1)</script>")
    page.click("#questionnaire-submit")
    page.wait_for_selector("#questionnaire-thanks")
    assert fits(page)
    assert QuestionnaireResponse.objects.get(phase="post").answers == {
        "effort": 2,
        "comment": "=1+1 <script>alert(1)</script>",
    }
    _shot(page, "thanks-390.png")
    # shown once: the start page's next Start goes straight to a task
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert ConsentResponse.objects.count() == 1 and QuestionnaireResponse.objects.count() == 2
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()


def test_an_annotator_who_declines_is_given_no_work(live_server, browser, researcher):
    survey = _survey(researcher)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/consent/$"))
    page.click("#consent-decline")
    page.wait_for_selector("#declined")
    assert fits(page) and "Thank you for your time" in page.content()
    _shot(page, "declined-390.png")
    assert ConsentResponse.objects.get().accepted is False
    assert not Assignment.objects.filter(annotator__isnull=False).exists()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/consent/$"))  # asked again, never given work
    assert not Assignment.objects.filter(annotator__isnull=False).exists()
    context.close()


def _log_in(page, url):
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")


@pytest.mark.parametrize("window", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_researcher_pages_fit_and_show_counts_only(live_server, browser, researcher, window):
    survey = _survey(researcher)
    assignment = Assignment.objects.none()
    from annotation import services
    from tests.annotation.studies_helpers import good_answers

    for n in (1, 2):
        assignment = services.assignment_claim(survey=survey, worker_id=f"person-{n}")
        consent_service.consent_record(survey=survey, annotator=assignment.annotator, accepted=True)
        consent_service.questionnaire_record(
            survey=survey,
            annotator=assignment.annotator,
            phase="pre",
            answers={"age": "30–44", "langs": ["English"], "fluency": 5, "job": "nurse", "years": n},
        )
        services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    width = window["width"]
    context = browser.new_context(viewport=window)
    page = context.new_page()
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/")
    page.click('a[href="/surveys/"] >> nth=0')
    page.click(f"text={survey.name}")
    page.wait_for_selector("#consent-panel")
    assert fits(page)
    page.locator("#consent-panel").scroll_into_view_if_needed()
    _shot(page, f"survey-panel-{width}.png")
    page.click("#participant-deletion")
    page.fill("#participant", "person-1")
    page.click("#preview-deletion")
    page.wait_for_selector("#deletion-preview")
    assert fits(page)
    _shot(page, f"deletion-preview-{width}.png")
    page.click("#confirm-deletion")
    page.wait_for_selector("text=Deletions so far")
    assert fits(page) and "person-1" not in page.content()
    _shot(page, f"deletion-done-{width}.png")
    page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
    page.wait_for_selector("#questionnaires")
    assert fits(page) and "nurse" not in page.content(), "text answers are not shown"
    page.locator("#questionnaires").scroll_into_view_if_needed()
    _shot(page, f"quality-summary-{width}.png")
    page.goto(f"{live_server.url}/surveys/new/")
    page.locator("#consent-section").scroll_into_view_if_needed()
    assert fits(page)
    _shot(page, f"survey-form-consent-{width}.png")
    context.close()


def test_the_annotator_steps_fit_a_desktop(live_server, browser, researcher):
    survey = _survey(researcher)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/consent/$"))
    assert fits(page)
    _shot(page, "consent-1366.png")
    page.click("#consent-accept")
    page.wait_for_url(re.compile(r"/questions/pre/$"))
    assert fits(page)
    _shot(page, "pre-questionnaire-1366.png")
    context.close()
    declining = browser.new_context(viewport=DESKTOP).new_page()
    declining.goto(f"{live_server.url}/s/{survey.token}/")
    declining.click("text=Start a task")
    declining.click("#consent-decline")
    declining.wait_for_selector("#declined")
    assert fits(declining)
    _shot(declining, "declined-1366.png")


@pytest.mark.parametrize("window", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_draft_edit_form_shows_the_consent_section_filled_in(live_server, browser, researcher, window):
    draft = make_survey(researcher, n_contexts=4, name="draft", launch=False)
    consent_service.consent_setup_save(
        survey=draft, consent_text="Info.", consent_version="3", pre_questions=parse_questions(PRE), post_questions=[]
    )
    context = browser.new_context(viewport=window)
    page = context.new_page()
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/surveys/{draft.pk}/")
    page.click(f'a[href="/surveys/{draft.pk}/edit/"] >> nth=0')
    page.wait_for_selector("#consent-section")
    assert fits(page) and page.input_value("#id_consent-consent_version") == "3"
    page.locator("#consent-section").scroll_into_view_if_needed()
    _shot(page, f"draft-edit-consent-{window['width']}.png")
    context.close()
