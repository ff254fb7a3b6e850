"""DSTC9's interactive-evaluation dialogues imported through the commands, checked against the raw release."""

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Conversation, ConversationAspect, ConversationRating, ConversationTurn
from scoring.metrics.conversation import conversation_metrics
from tests.annotation.dstc9_helpers import import_dstc9

pytestmark = [pytest.mark.shared_data, pytest.mark.django_db]

SYSTEMS = ("chatbot1", "chatbot2", "chatbot3", "chatbot4")


@pytest.fixture
def raw(shared_data):
    folder = shared_data / "dstc9_interactive"
    return {s: json.loads((folder / f"{s}.json").read_text(encoding="utf-8")) for s in SYSTEMS}


@pytest.fixture
def imported(shared_data, tmp_path, researcher):
    return import_dstc9(shared_data, tmp_path, researcher)


def _lines(context):
    return [line for line in context.split("\n") if line]


def test_every_dialogue_and_turn_of_the_release_is_imported(imported, raw):
    assert imported.conversations.count() == sum(len(items) for items in raw.values()) == 2360
    for system, items in raw.items():
        assert imported.conversations.filter(system__name=system).count() == len(items)
    n_lines = sum(len(_lines(item["context"])) for items in raw.values() for item in items)
    assert ConversationTurn.objects.filter(conversation__dataset=imported).count() == n_lines
    n_system = sum(
        line.startswith("System: ") for items in raw.values() for item in items for line in _lines(item["context"])
    )
    assert ConversationTurn.objects.filter(conversation__dataset=imported, speaker="system").count() == n_system


def test_turns_keep_the_release_text_and_order(imported, raw):
    item = raw["chatbot3"][0]
    turns = list(
        Conversation.objects.get(dataset=imported, external_id="chatbot3-0").turns.values_list("speaker", "text")
    )
    expected = [
        ("user" if line.startswith("User: ") else "system", line.split(": ", 1)[1]) for line in _lines(item["context"])
    ]
    assert turns == expected
    assert turns[1] == ("system", "Hi there. tell me about yourself.")


def test_every_released_score_is_one_rating_on_its_aspects_own_scale(imported, raw):
    numeric = [
        (s, k, name, v)
        for s, items in raw.items()
        for k, item in enumerate(items)
        for name, v in item.items()
        if isinstance(v, int)
    ]
    assert ConversationRating.objects.filter(conversation__dataset=imported).count() == len(numeric)
    assert not ConversationRating.objects.filter(turn__isnull=False).exists()
    scales = {a.key: (a.scale_min, a.scale_max) for a in ConversationAspect.objects.filter(dataset=imported)}
    assert scales["overall"] == (1, 5) and scales["consistent"] == (0, 1) and scales["error-recovery"] == (1, 3)
    assert len(scales) == 11
    first = raw["chatbot1"][0]
    stored = dict(
        ConversationRating.objects.filter(conversation__external_id="chatbot1-0").values_list("aspect", "score")
    )
    assert stored["overall"] == first["human (overall)"] == 4
    assert stored["consistent"] == first["consistent"] == 1
    assert stored["topic-depth"] == first["topic depth"]
    # A released N/A is no rating.
    na = next(
        (s, k, name)
        for s, items in raw.items()
        for k, item in enumerate(items)
        for name, v in item.items()
        if v == "N/A"
    )
    key = "overall" if na[2] == "human (overall)" else na[2].replace(" ", "-")
    assert not ConversationRating.objects.filter(conversation__external_id=f"{na[0]}-{na[1]}", aspect=key).exists()
    for system, items in raw.items():
        released = [item["human (overall)"] for item in items]
        stored_scores = ConversationRating.objects.filter(
            conversation__system__name=system, aspect="overall"
        ).values_list("score", flat=True)
        assert sorted(stored_scores) == sorted(released)


def test_the_export_round_trips_the_release(imported, tmp_path):
    out = tmp_path / "export.jsonl"
    call_command("export_conversations", "--dataset", "dstc9", "--output", str(out), stderr=io.StringIO())
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(exported) == 2360
    assert exported[0]["conversation_id"] == "chatbot1-0"


def test_conversation_metrics_run_on_the_release(raw):
    conversations = [
        [(line.split(": ", 1)[0].lower(), line.split(": ", 1)[1]) for line in _lines(item["context"])]
        for item in raw["chatbot1"]
    ]
    values = conversation_metrics(conversations)
    first_system = [text for speaker, text in conversations[0] if speaker == "system"]
    assert values["system_turns"][0] == len(first_system)
    assert values["question_rate"][0] == sum("?" in t for t in first_system) / len(first_system)
    assert all(0 < v <= 1 for v in values["distinct_1"])
