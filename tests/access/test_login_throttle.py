"""Login throttling: 12 wrong passwords for one username from one address lock that pair for 15 minutes."""

import logging
from datetime import UTC, timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client
from django.urls import reverse

from config.security.login_throttle import client_network
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

WRONG = "not-the-password"


def attempt(client, username, password, address="203.0.113.7"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(client):
    return "_auth_user_id" in client.session


def test_twelve_wrong_passwords_lock_the_user_out_even_with_the_right_password(client, researcher, caplog):
    caplog.set_level(logging.WARNING, logger="axes")
    for _ in range(11):
        response = attempt(client, "alice", WRONG)
        assert response.status_code == 200 and "Please enter a correct username and password" in response.text
    locked = attempt(client, "alice", WRONG)
    assert locked.status_code == 429
    assert "Login locked for now" in locked.text and "locked for 15 minutes" in locked.text
    assert attempt(client, "alice", PASSWORD).status_code == 429
    assert not logged_in(client)
    assert any("Locking out" in r.getMessage() and "alice" in r.getMessage() for r in caplog.records)
    assert not any(WRONG in r.getMessage() or PASSWORD in r.getMessage() for r in caplog.records)
    assert not AccessAttempt.objects.filter(post_data__contains=WRONG).exists()


def test_the_lockout_page_says_when_to_try_again(client, researcher):
    for _ in range(12):
        response = attempt(client, "alice", WRONG)
    last = AccessAttempt.objects.get(username="alice").attempt_time
    until = (last + timedelta(minutes=15)).astimezone(UTC)
    assert f'Try again after <strong><time datetime="{until.isoformat()}">{until:%H:%M} UTC</time>' in response.text
    assert "in about 15 minutes" in response.text
    assert response["Cache-Control"] == "private, no-store"


def test_the_lock_holds_one_username_at_one_address_only(client, researcher, other_researcher):
    for _ in range(12):
        attempt(client, "alice", WRONG)
    elsewhere = Client()
    assert attempt(elsewhere, "alice", PASSWORD, address="198.51.100.20").status_code == 302
    assert logged_in(elsewhere)
    colleague = Client()
    assert attempt(colleague, "bob", PASSWORD).status_code == 302  # same address, another user


def test_wrong_passwords_from_one_ipv6_64_network_count_together_whatever_the_address(client, researcher):
    for n in range(12):
        attempt(client, "alice", WRONG, address=f"2001:db8:77:1::{n + 1:x}")
    assert attempt(Client(), "alice", PASSWORD, address="2001:db8:77:1:9999::1").status_code == 429
    assert AccessAttempt.objects.get(username="alice").ip_address == "2001:db8:77:1::"
    elsewhere = Client()
    assert attempt(elsewhere, "alice", PASSWORD, address="2001:db8:77:2::1").status_code == 302
    assert logged_in(elsewhere), "another /64 is another client"


@pytest.mark.parametrize(
    ("text", "counted_as"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("2001:db8::1", "2001:db8::"),
        ("2001:DB8:0:0:1234:5678:9abc:def0", "2001:db8::"),
        ("fe80::1%eth0", "fe80::"),
        ("not an address", "not an address"),
        ("", ""),
    ],
)
def test_the_client_is_counted_by_its_ipv4_address_or_its_ipv6_64_network(text, counted_as):
    assert client_network(text) == counted_as


def test_the_lock_ends_after_fifteen_minutes(client, researcher):
    for _ in range(12):
        attempt(client, "alice", WRONG)
    # Failures during the lock do not extend it.
    assert attempt(client, "alice", WRONG).status_code == 429
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=14, seconds=50))
    assert attempt(client, "alice", PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=11))
    assert attempt(client, "alice", PASSWORD).status_code == 302
    assert logged_in(client)


def test_eleven_wrong_passwords_then_the_right_one_logs_in_and_starts_the_count_again(client, researcher):
    for _ in range(11):
        attempt(client, "alice", WRONG)
    assert attempt(client, "alice", PASSWORD).status_code == 302
    client.post(reverse("logout"))
    for _ in range(11):
        attempt(client, "alice", WRONG)
    assert attempt(client, "alice", PASSWORD).status_code == 302


def test_the_admin_login_is_throttled_too(client, admin_user):
    for _ in range(12):
        client.post("/admin/login/", {"username": "root", "password": WRONG}, REMOTE_ADDR="203.0.113.9")
    response = client.post("/admin/login/", {"username": "root", "password": PASSWORD}, REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 429


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_clients(client, researcher, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for _ in range(12):
        client.post(
            reverse("login"),
            {"username": "alice", "password": WRONG},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.50",
        )
    assert AccessAttempt.objects.get(username="alice").ip_address == "203.0.113.50"
    other = Client()
    ok = other.post(
        reverse("login"),
        {"username": "alice", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR="203.0.113.51",
    )
    assert ok.status_code == 302
