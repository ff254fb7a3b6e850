"""The API tokens page: list own tokens, create one (its key shown once), revoke with confirmation."""

import hashlib
import re
from io import StringIO

from django.core.management import call_command
from django.urls import reverse

from scoring.models import ApiToken
from scoring.services.tokens import api_token_create, api_token_user


def _created_key(page):
    found = re.search(r'<code id="new-key">([^<]+)</code>', page.content.decode())
    assert found, "the new key is shown"
    return found.group(1)


def test_creating_a_token_shows_its_key_once_and_stores_only_its_hash(researcher_client, researcher):
    page = researcher_client.post(reverse("scoring:api_tokens"), {"name": "nightly script"})
    key = _created_key(page)
    token = ApiToken.objects.get(user=researcher)
    assert token.name == "nightly script" and token.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
    assert "no-store" in page["Cache-Control"]
    again = researcher_client.get(reverse("scoring:api_tokens")).content.decode()
    assert "nightly script" in again and key not in again and "never" in again
    assert api_token_user(key=key) == researcher
    assert "never" not in researcher_client.get(reverse("scoring:api_tokens")).content.decode()  # last used: now


def test_the_token_list_shows_only_ones_own_tokens(researcher_client, other_researcher):
    api_token_create(user=other_researcher, name="bobs laptop")
    page = researcher_client.get(reverse("scoring:api_tokens")).content.decode()
    assert "bobs laptop" not in page and "No tokens yet" in page


def test_a_token_without_a_name_is_refused_and_none_is_made(researcher_client):
    page = researcher_client.post(reverse("scoring:api_tokens"), {"name": ""})
    assert page.status_code == 200 and "This field is required" in page.content.decode()
    assert not ApiToken.objects.exists()


def test_revoking_asks_first_and_then_the_key_stops_working(researcher_client, researcher):
    key = api_token_create(user=researcher, name="old")
    token = ApiToken.objects.get()
    url = reverse("scoring:api_token_revoke", args=[token.pk])
    confirm = researcher_client.get(url)
    assert confirm.status_code == 200 and "Revoke token" in confirm.content.decode()
    assert ApiToken.objects.exists()  # a GET changes nothing
    done = researcher_client.post(url)
    assert done.status_code == 302 and done.url == reverse("scoring:api_tokens")
    assert not ApiToken.objects.exists() and api_token_user(key=key) is None


def test_another_researchers_token_cannot_be_revoked(client, researcher, other_researcher):
    api_token_create(user=other_researcher, name="bobs")
    client.force_login(researcher)
    url = reverse("scoring:api_token_revoke", args=[ApiToken.objects.get().pk])
    assert client.get(url).status_code == 404 and client.post(url).status_code == 404
    assert ApiToken.objects.count() == 1


def test_the_tokens_page_needs_login(client):
    response = client.get(reverse("scoring:api_tokens"))
    assert response.status_code == 302 and "login" in response.url


def test_the_adem_models_page_links_to_the_tokens_page(researcher_client):
    assert reverse("scoring:api_tokens") in researcher_client.get(reverse("scoring:adem_models")).content.decode()


def test_the_adem_token_command_still_prints_a_working_key(researcher):
    out = StringIO()
    call_command("adem_token", user="alice", name="cli", stdout=out)
    assert api_token_user(key=out.getvalue().strip()) == researcher
    assert ApiToken.objects.get().name == "cli"
