"""A Content-Security-Policy on every page and `Cache-Control: private, no-store` on every dynamic response."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation import services
from tests.annotation import mturk_helpers
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent.parent
SITE_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(response):
    header = response["Content-Security-Policy"]
    return {part.split()[0]: " ".join(part.split()[1:]) for part in header.split(";") if part.strip()}


@pytest.fixture
def study(researcher, monkeypatch, settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    settings.MEDIA_ROOT = tmp_path
    survey = make_survey(researcher, name="headers")
    assignment = services.assignment_claim(survey=survey, worker_id="w-headers")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    mturk_helpers.install_stub(monkeypatch, settings)
    turk = mturk_helpers.make_survey(researcher, n_hits=1, name="headers-turk")
    return {"survey": survey, "dataset": survey.dataset, "assignment": assignment, "turk": turk}


def researcher_urls(study):
    survey, dataset = study["survey"], study["dataset"]
    return [
        reverse("annotation:dataset_list"),
        reverse("annotation:dataset_detail", args=[dataset.pk]),
        reverse("annotation:survey_detail", args=[survey.pk]),
        reverse("annotation:survey_progress_json", args=[survey.pk]),
        reverse("annotation:survey_preview", args=[survey.pk]),
        reverse("annotation:survey_export", args=[survey.pk]),
        reverse("annotation:dataset_download", args=[dataset.pk, "ratings", "csv"]),
        reverse("annotation:quality_survey", args=[survey.pk]),
        reverse("scoring:dataset_metrics", args=[dataset.pk]),
        reverse("scoring:adem_models"),
        reverse("analysis:dataset_report", args=[dataset.pk]),
        "/admin/",
    ]


def test_every_page_sends_the_site_policy_with_no_unsafe_inline(client, admin_user, study):
    client.force_login(admin_user)
    anonymous = [reverse("login"), reverse("password_reset"), f"/s/{study['survey'].token}/"]
    for url in researcher_urls(study):
        response = client.get(url)
        assert response.status_code == 200, url
        found = policy(response)
        assert {k: found.get(k) for k in SITE_POLICY} == SITE_POLICY, url
        assert "unsafe-inline" not in response["Content-Security-Policy"], url
    client.logout()
    for url in anonymous:
        response = client.get(url)
        assert {k: policy(response).get(k) for k in SITE_POLICY} == SITE_POLICY, url


def test_the_mturk_task_page_may_be_framed_by_mturk_and_post_to_it_but_keeps_the_policy(client, study):
    turk = study["turk"]
    response = client.get(
        reverse("annotation:mturk_task", args=[turk.token]), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    )
    assert response.status_code == 200
    found = policy(response)
    sites = "https://www.mturk.com https://worker.mturk.com https://workersandbox.mturk.com"
    assert found["frame-ancestors"] == sites
    assert found["form-action"] == f"'self' {sites}"
    assert found["script-src"] == "'self'" and found["default-src"] == "'self'"


def test_researcher_pages_json_and_downloads_are_private_and_never_stored(client, researcher, study):
    client.force_login(researcher)
    for url in researcher_urls(study)[:-1]:
        response = client.get(url)
        assert response["Cache-Control"] == "private, no-store", url


def test_annotator_pages_are_never_stored_but_static_files_keep_their_caching(client, study, settings):
    settings.WHITENOISE_USE_FINDERS = True  # serve from static/ as in development, no collectstatic needed
    response = client.get(f"/s/{study['survey'].token}/")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    refused = client.get(f"/a/{study['assignment'].token}/")  # another annotator's HIT: refused, still not stored
    assert refused["Cache-Control"] == "private, no-store"
    static = client.get("/" + settings.STATIC_URL.lstrip("/") + "css/ratelab.css")
    assert static.status_code == 200 and "no-store" not in static.get("Cache-Control", "")


TEMPLATE_DIRS = [ROOT / "templates", *ROOT.glob("*/templates")]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"\sstyle\s*=", re.IGNORECASE)
EVENT_ATTRIBUTE = re.compile(r"\son[a-z]+\s*=\s*[\"']", re.IGNORECASE)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.IGNORECASE)


def test_no_template_has_inline_script_style_or_event_handler():
    """The policy has no 'unsafe-inline': any of these would be blocked in the browser."""
    problems = []
    templates = [path for folder in TEMPLATE_DIRS for path in folder.rglob("*.html")]
    assert len(templates) > 20
    for path in templates:
        text = path.read_text(encoding="utf-8")
        for name, pattern in (
            ("inline <script>", INLINE_SCRIPT),
            ("style attribute", STYLE_ATTRIBUTE),
            ("on* handler", EVENT_ATTRIBUTE),
            ("<style> element", STYLE_ELEMENT),
        ):
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not problems, "move these into static files under static/<app>/: " + "; ".join(problems)
