"""Chat systems as endpoints (issue 38): adding, changing and removing them under the judges' host and key
rules, owner-only pages, and the chat_system_add command."""

import os

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import ChatSystem
from annotation.services.chat_systems.registry import ChatSystemRefusal, chat_system_create, chat_system_settings

pytestmark = pytest.mark.django_db

GOOD = {
    "name": "bot-a",
    "base_url": "https://api.example.org/v1",
    "model": "chat-model",
    "api_key_env": "",
    "system_prompt": "You are friendly.",
    "temperature": "0.7",
    "max_tokens": "128",
    "timeout_seconds": "20",
    "connect_timeout_seconds": "5",
}


@pytest.fixture(autouse=True)
def operator_rules(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = False
    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_CHAT_KEY",), "bob": ("BOB_CHAT_KEY",)}


def _add(client, **changes):
    return client.post(reverse("annotation:chat_system_add"), {**GOOD, **changes})


def test_a_researcher_adds_a_chat_system_and_lands_on_its_page(researcher_client, researcher):
    response = _add(researcher_client)
    system = ChatSystem.objects.get()
    assert response.status_code == 302 and response.url == reverse("annotation:chat_system_edit", args=[system.pk])
    assert (system.owner, system.model, system.system_prompt, system.max_tokens) == (
        researcher,
        "chat-model",
        "You are friendly.",
        128,
    )


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("base_url", "http://169.254.169.254/latest/meta-data", "link-local address"),
        ("base_url", "http://[::ffff:169.254.169.254]/v1", "link-local address"),
        ("base_url", "http://127.0.0.1:8000/v1", "chat systems may use such addresses only where the operator sets"),
        ("base_url", "http://user:pass@api.example.org/v1", "without a user name or password"),
        ("base_url", "ftp://api.example.org/v1", "http:// or https://"),
        ("api_key_env", "BOB_CHAT_KEY", "BOB_CHAT_KEY is not a key variable assigned to you"),
        ("api_key_env", "sk-live-123", "not the key"),
    ],
)
def test_the_add_page_refuses_what_the_rules_refuse_and_adds_nothing(researcher_client, field, value, said):
    response = _add(researcher_client, **{field: value})
    assert response.status_code == 200
    assert said in response.content.decode().replace("&#x27;", "'")
    assert not ChatSystem.objects.exists()


def test_a_host_outside_the_operators_list_is_refused(researcher_client, settings):
    settings.JUDGE_ALLOWED_HOSTS = [".example.org"]
    refused = _add(researcher_client, base_url="https://api.other.test/v1")
    assert refused.status_code == 200 and not ChatSystem.objects.exists()
    assert "not among the hosts this server&#x27;s chat systems may use" in refused.content.decode()
    assert _add(researcher_client, base_url="https://llm.example.org/v1").status_code == 302


def test_a_key_variable_named_like_a_server_secret_is_refused_even_when_assigned(researcher, settings):
    settings.JUDGE_KEY_VARIABLES = {"alice": ("DJANGO_SECRET_KEY",)}
    with pytest.raises(ValidationError, match="cannot be a chat system's key variable"):
        chat_system_create(
            owner=researcher, name="x", base_url=GOOD["base_url"], model="m", api_key_env="DJANGO_SECRET_KEY"
        )
    assert not ChatSystem.objects.exists()


def test_a_disallowed_key_variable_is_never_read(researcher, settings, monkeypatch):
    system = chat_system_create(
        owner=researcher, name="x", base_url=GOOD["base_url"], model="m", api_key_env="ALICE_CHAT_KEY"
    )
    settings.JUDGE_KEY_VARIABLES = {"bob": ("ALICE_CHAT_KEY",)}  # the operator moved it to bob
    monkeypatch.setenv("ALICE_CHAT_KEY", "sk-alice-private")
    read = []

    class Watched(dict):
        def get(self, name, default=None):
            read.append(name)
            return super().get(name, default)

    monkeypatch.setattr(os, "environ", Watched(os.environ))
    with pytest.raises(ChatSystemRefusal, match="ALICE_CHAT_KEY is not a key variable assigned to you"):
        chat_system_settings(system)
    assert read == []


def test_an_assigned_key_is_read_when_asked_and_never_appears_in_the_settings_repr(researcher, monkeypatch):
    monkeypatch.setenv("ALICE_CHAT_KEY", "sk-alice-private")
    system = chat_system_create(
        owner=researcher, name="x", base_url=GOOD["base_url"], model="m", api_key_env="ALICE_CHAT_KEY"
    )
    settings = chat_system_settings(system)
    assert settings.api_key == "sk-alice-private" and "sk-alice" not in repr(settings)
    monkeypatch.delenv("ALICE_CHAT_KEY")
    with pytest.raises(ChatSystemRefusal, match="ALICE_CHAT_KEY, which is not set"):
        chat_system_settings(system)


def test_the_pages_never_show_the_key_only_whether_it_is_set(researcher_client, researcher, monkeypatch):
    monkeypatch.setenv("ALICE_CHAT_KEY", "sk-alice-private")
    system = chat_system_create(
        owner=researcher, name="x", base_url=GOOD["base_url"], model="m", api_key_env="ALICE_CHAT_KEY"
    )
    for url in (reverse("annotation:chat_system_list"), reverse("annotation:chat_system_edit", args=[system.pk])):
        page = researcher_client.get(url).content.decode()
        assert "$ALICE_CHAT_KEY is set" in page and "sk-alice-private" not in page


def test_editing_checks_the_rules_again_and_keeps_the_stored_values_when_refused(researcher_client, researcher):
    system = chat_system_create(owner=researcher, name="x", base_url=GOOD["base_url"], model="m")
    url = reverse("annotation:chat_system_edit", args=[system.pk])
    refused = researcher_client.post(url, {**GOOD, "name": "x", "base_url": "http://10.0.0.5/v1"})
    assert refused.status_code == 200 and "private or reserved address" in refused.content.decode()
    system.refresh_from_db()
    assert system.base_url == GOOD["base_url"]
    saved = researcher_client.post(url, {**GOOD, "name": "x", "model": "bigger-model"})
    system.refresh_from_db()
    assert saved.status_code == 302 and system.model == "bigger-model"


def test_names_are_unique_per_owner_only(researcher_client, researcher, other_researcher):
    chat_system_create(owner=other_researcher, name="bot-a", base_url=GOOD["base_url"], model="m")
    assert _add(researcher_client).status_code == 302
    again = _add(researcher_client)
    assert again.status_code == 200 and "already have a chat system with this name" in again.content.decode()


def test_another_researcher_staff_included_meets_404_on_every_page(client, researcher, other_researcher, settings):
    system = chat_system_create(owner=researcher, name="secret-bot", base_url=GOOD["base_url"], model="m")
    other_researcher.is_staff = True
    other_researcher.save()
    client.force_login(other_researcher)
    for name in ("chat_system_edit", "chat_system_remove"):
        assert client.get(reverse(f"annotation:{name}", args=[system.pk])).status_code == 404
    assert client.post(reverse("annotation:chat_system_test", args=[system.pk]), {"message": "hi"}).status_code == 404
    assert client.post(reverse("annotation:chat_system_remove", args=[system.pk])).status_code == 404
    assert "secret-bot" not in client.get(reverse("annotation:chat_system_list")).content.decode()
    assert ChatSystem.objects.filter(pk=system.pk).exists()


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(reverse("annotation:chat_system_list"))
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_removing_asks_first_then_removes(researcher_client, researcher):
    system = chat_system_create(owner=researcher, name="x", base_url=GOOD["base_url"], model="m")
    url = reverse("annotation:chat_system_remove", args=[system.pk])
    assert "Remove chat system x?" in researcher_client.get(url).content.decode()
    assert ChatSystem.objects.exists()
    assert researcher_client.post(url).status_code == 302
    assert not ChatSystem.objects.exists()


def test_the_pages_are_reached_by_clicking_from_the_surveys_page(researcher_client):
    surveys = researcher_client.get(reverse("annotation:survey_list")).content.decode()
    assert f'href="{reverse("annotation:chat_system_list")}"' in surveys
    listing = researcher_client.get(reverse("annotation:chat_system_list")).content.decode()
    assert f'href="{reverse("annotation:chat_system_add")}"' in listing


def test_the_command_adds_a_system_for_its_owner(researcher, capsys):
    call_command(
        "chat_system_add",
        "--name=cmd-bot",
        "--base-url=https://api.example.org/v1",
        "--model=m",
        "--api-key-env=ALICE_CHAT_KEY",
        "--system-prompt=Be brief.",
        "--owner=alice",
    )
    system = ChatSystem.objects.get(name="cmd-bot")
    assert (system.owner, system.api_key_env, system.system_prompt) == (researcher, "ALICE_CHAT_KEY", "Be brief.")
    assert "chat system 'cmd-bot' added for alice" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--base-url=http://169.254.169.254/v1"], "link-local"),
        (["--api-key-env=BOB_CHAT_KEY"], "BOB_CHAT_KEY is not a key variable assigned to you"),
        (["--api-key-env=sk-abc"], "not the key itself"),
        (["--owner=nobody"], "nobody"),
    ],
)
def test_the_command_refuses_what_the_rules_refuse(researcher, arguments, said):
    base = ["--name=cmd-bot", "--base-url=https://api.example.org/v1", "--model=m", "--owner=alice"]
    overridden = {argument.split("=")[0] for argument in arguments}
    kept = [argument for argument in base if argument.split("=")[0] not in overridden]
    with pytest.raises(CommandError, match=said):
        call_command("chat_system_add", *kept, *arguments)
    assert not ChatSystem.objects.exists()
