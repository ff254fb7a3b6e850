"""Password reset by e-mail: Django's views under /accounts/, RateLab's templates, no account revealed."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from tests.test_settings import manage

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-new-and-long-passphrase-42"


def test_the_login_page_offers_a_password_reset(client):
    page = client.get(reverse("login")).text
    assert f'<a href="{reverse("password_reset")}">Forgot your password?</a>' in page


def test_a_researcher_resets_the_password_through_the_emailed_link(client, researcher):
    researcher.email = "alice@example.org"
    researcher.save()
    form = client.get(reverse("password_reset"))
    assert (
        form.status_code == 200 and "Reset your password" in form.text and 'href="/static/css/ratelab.css"' in form.text
    )
    sent = client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert sent.status_code == 302 and sent["Location"] == reverse("password_reset_done")
    assert "Check your e-mail" in client.get(sent["Location"]).text
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.org"] and message.subject == "Reset your RateLab password"
    assert '"alice"' in message.body
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", message.body).group(1)
    choose = client.get(link, follow=True)
    assert "Choose a new password" in choose.text
    done = client.post(choose.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert "Your password is changed" in client.get(done["Location"]).text
    assert client.login(username="alice", password=NEW_PASSWORD)
    assert "This link no longer works" in client.get(link, follow=True).text  # once only


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client, researcher):
    sent = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert sent.status_code == 302 and sent["Location"] == reverse("password_reset_done")
    assert mail.outbox == []


def test_mail_goes_to_the_console_unless_the_environment_says_otherwise():
    show = "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS)"
    assert manage("shell", "--no-imports", "-c", show).stdout.split() == [
        "django.core.mail.backends.console.EmailBackend",
        "localhost",
        "25",
        "False",
    ]
    smtp = manage(
        "shell",
        "--no-imports",
        "-c",
        show,
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="smtp.example.org",
        EMAIL_PORT="587",
        EMAIL_USE_TLS="1",
    )
    assert smtp.stdout.split() == ["django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "587", "True"]
