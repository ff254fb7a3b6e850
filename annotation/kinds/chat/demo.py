"""The demo's live chat survey (issue 38): `manage.py demo` calls `demo_live_chat` once, and `make demo`
starts the demo bot (`manage.py demo_bot --port DEMO_BOT_PORT`, annotation/services/chat_systems/demo_bot.py)
beside the server, so the printed link opens a chat with it.

The chat system is registered without the operator's host check: the demo's operator is the demo
itself, and the server it runs (`make demo`) sets JUDGE_ALLOW_PRIVATE_HOSTS=1, under which every
request is checked again (`chat_systems.registry.chat_system_settings`)."""

from django.contrib.auth import get_user_model

from annotation.kinds.chat.setup import chat_survey_create
from annotation.models import ChatSystem, Dataset, Survey
from annotation.services.chat_systems.demo_bot import MODEL_NAME
from annotation.services.surveys import survey_launch

DEMO_BOT_PORT = 8765
CHAT_DATASET = "demo-live-chat"
CHAT_SURVEY = "demo-live-chat"
CHAT_SYSTEM = "demo-bot"


def demo_live_chat(*, username, bot_port=DEMO_BOT_PORT):
    """The demo researcher's live chat survey on the demo bot (made on first call); the survey."""
    owner = get_user_model().objects.get(username=username)
    survey = Survey.objects.filter(name=CHAT_SURVEY, owner=owner).first()
    if survey is not None:
        return survey
    system = ChatSystem.objects.filter(owner=owner, name=CHAT_SYSTEM).first()
    if system is None:
        system = ChatSystem(
            owner=owner,
            name=CHAT_SYSTEM,
            base_url=f"http://127.0.0.1:{bot_port}/v1",
            model=MODEL_NAME,
            system_prompt="",
            timeout_seconds=10.0,
        )
        system.full_clean()
        system.save()
    dataset, _ = Dataset.objects.get_or_create(
        owner=owner, name=CHAT_DATASET, defaults={"description": "Conversations collected in the demo's live chat."}
    )
    survey = chat_survey_create(
        dataset=dataset,
        name=CHAT_SURVEY,
        owner=owner,
        chat_systems=[CHAT_SYSTEM],
        min_turns=3,
        max_turns=8,
        conversations_per_system=10,
        seed_text="",
        max_hits_per_annotator=3,
    )
    return survey_launch(survey=survey)
