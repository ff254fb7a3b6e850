"""Live chat races on PostgreSQL (row locks): two tabs sending at once, a double-clicked Send, and
a retry racing a send: one message stored once, one request in flight, nothing doubled."""

import threading

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client

from annotation.models import ChatAttempt, ConversationTurn
from tests.annotation.live_chat_helpers import ChatClient, chat_survey, chat_system
from tests.stand_in_bot import stand_in_bot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _needs_postgres(settings):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL (DATABASE_URL=postgres://...)")
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


def test_two_tabs_sending_at_once_store_one_message_and_one_reply_at_a_time(researcher):
    with stand_in_bot("ok", delay=0.5) as bot:
        survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)])
        chat = ChatClient(Client(), survey)
        chat.state()
        results = []

        def tab(text):
            try:
                results.append(chat.send(text))
            finally:
                connection.close()

        threads = [threading.Thread(target=tab, args=(f"tab {i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = sorted(status for status, _ in results)
        assert statuses == [200, 409], results
        refused = next(body for status, body in results if status == 409)
        assert "Wait for the reply" in refused["error"] or "already on its way" in refused["error"]
        assert ConversationTurn.objects.filter(speaker="user").count() == 1
        assert ConversationTurn.objects.filter(speaker="system").count() == 1
        assert len(bot.requests) == 1


def test_a_double_clicked_send_stores_the_message_once(researcher):
    with stand_in_bot("ok", delay=0.3) as bot:
        survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)])
        chat = ChatClient(Client(), survey)
        chat.state()
        results = []

        def click():
            try:
                results.append(chat.send("same", key="k-1"))
            finally:
                connection.close()

        threads = [threading.Thread(target=click) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(status in (200, 409) for status, _ in results), results
        assert ConversationTurn.objects.filter(speaker="user").count() == 1
        assert ConversationTurn.objects.filter(speaker="system").count() == 1
        assert ChatAttempt.objects.count() == 1 and len(bot.requests) == 1
