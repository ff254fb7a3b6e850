"""Builders for the live chat tests: a researcher's chat systems on stand-in bots, a chat survey over
an empty dataset, and an annotator's client driving the chat's address as the page's script does."""

import uuid

from annotation.kinds.chat.setup import chat_survey_create
from annotation.models import Dataset
from annotation.services import survey_launch
from annotation.services.chat_systems.registry import chat_system_create
from tests.annotation.link_helpers import start_task


def chat_system(owner, base_url, name="bot-a", **fields):
    fields = {"timeout_seconds": 2.0, "connect_timeout_seconds": 1.0, **fields}
    return chat_system_create(owner=owner, name=name, base_url=base_url, model="stand-in", **fields)


def chat_survey(owner, systems, *, name="live", min_turns=2, max_turns=4, per_system=2, launch=True, **options):
    dataset = Dataset.objects.create(owner=owner, name=f"ds-{name}")
    survey = chat_survey_create(
        dataset=dataset,
        name=name,
        owner=owner,
        chat_systems=[s.name for s in systems],
        min_turns=min_turns,
        max_turns=max_turns,
        conversations_per_system=per_system,
        **options,
    )
    return survey_launch(survey=survey) if launch else survey


class ChatClient:
    """One annotator's browser: Start on the link, then the chat's address."""

    def __init__(self, client, survey, worker="w1"):
        self.client = client
        self.task_url = start_task(client, survey, worker)
        self.url = self.task_url + "chat/"

    def state(self):
        response = self.client.get(self.url)
        assert response.status_code == 200, response.content[:300]
        return response.json()["state"]

    def post(self, **fields):
        response = self.client.post(self.url, fields)
        return response.status_code, response.json()

    def send(self, text, key=None):
        return self.post(action="send", text=text, key=key or uuid.uuid4().hex)
