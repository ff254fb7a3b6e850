"""Pages and JSON go out gzipped to a browser that accepts it (issue 35, F28), headers kept."""

import gzip

import pytest
from django.urls import reverse

from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def test_researcher_pages_are_gzipped_with_their_no_store_and_policy_headers(client, researcher):
    survey = make_survey(researcher, name="gzip")
    client.force_login(researcher)
    for url in (
        reverse("annotation:dataset_detail", args=[survey.dataset.pk]),
        reverse("annotation:survey_detail", args=[survey.pk]),
        reverse("annotation:survey_progress_json", args=[survey.pk]),
    ):
        response = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        assert response.status_code == 200, url
        assert response["Content-Encoding"] == "gzip", url
        assert "Accept-Encoding" in response["Vary"], url
        assert response["Cache-Control"] == "private, no-store", url
        assert "Content-Security-Policy" in response, url
        body = gzip.decompress(response.content)
        assert len(response.content) < len(body), url
        plain = client.get(url)  # a client that does not ask for gzip gets the page as it is
        assert not plain.has_header("Content-Encoding"), url


def test_annotator_pages_are_gzipped_and_still_carry_their_csrf_token(client, researcher):
    survey = make_survey(researcher, name="gzip-annotator")
    response = client.get(f"/s/{survey.token}/", HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200 and response["Content-Encoding"] == "gzip"
    assert b'name="csrfmiddlewaretoken"' in gzip.decompress(response.content)
    assert response["Cache-Control"] == "private, no-store"
