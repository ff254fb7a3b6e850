"""The demo's conversation study (annotation/kinds/conversation/demo.py): generated conversations,
simulated whole-conversation, per-turn and ACUTE answers, and two live surveys to try."""

import statistics

import pytest
from django.contrib.auth.models import User

from annotation.kinds.conversation.demo import (
    ACUTE_SURVEY,
    BOTS,
    RATED_SURVEY,
    conversation_demo,
    demo_conversation_records,
)
from annotation.models import ConversationJudgement, ConversationRating, Survey


def test_records_are_seeded_one_per_bot_and_seed_with_latent_quality():
    records = demo_conversation_records(seed=3)
    assert records == demo_conversation_records(seed=3)
    assert records != demo_conversation_records(seed=4)
    assert len(records) == 24 * len(BOTS)
    seeds = {}
    for record in records:
        seeds.setdefault(record["seed"], []).append(record["system"])
        bot_turns = [i for i, t in enumerate(record["turns"]) if t["speaker"] == "system"]
        assert sorted(map(int, record["demo_turn_quality"])) == bot_turns
    assert all(sorted(bots) == sorted(BOTS) for bots in seeds.values())
    quality = {b: statistics.mean(r["demo_quality"] for r in records if r["system"] == b) for b in BOTS}
    assert quality["attentive"] > quality["chatty"] > quality["looper"]
    assert quality["chatty"] > quality["drifter"]
    # the looper repeats its first answer word for word (what the "repetitive" flag is for)
    looper = next(r for r in records if r["system"] == "looper")
    bot = [t["text"] for t in looper["turns"] if t["speaker"] == "system"]
    assert bot[2] == bot[3] == bot[4]


@pytest.mark.django_db
def test_conversation_demo_simulates_every_answer_kind_and_leaves_live_surveys_empty():
    owner = User.objects.create_user("demo")
    demo = conversation_demo(owner=owner, seed=7)
    rated = Survey.objects.get(name=RATED_SURVEY, owner=owner)
    acute = Survey.objects.get(name=ACUTE_SURVEY, owner=owner)
    whole = ConversationRating.objects.filter(survey=rated, turn__isnull=True)
    per_turn = ConversationRating.objects.filter(survey=rated, turn__isnull=False)
    assert whole.filter(aspect="overall").count() >= 96 * 3  # every conversation rated three times (+ golds)
    assert per_turn.filter(aspect="turn_quality").exists() and per_turn.filter(aspect="repetitive").exists()
    assert ConversationJudgement.objects.filter(survey=acute).count() > 0
    for live in (demo.live_turns, demo.live_acute):
        assert live.status == Survey.Status.LIVE
        assert not ConversationRating.objects.filter(survey=live).exists()
        assert not ConversationJudgement.objects.filter(survey=live).exists()
    # per-turn scores follow each turn's latent quality: the looper's repeats score below its first answer
    looper = per_turn.filter(
        aspect="turn_quality", conversation__system__name="looper", conversation__meta__isnull=False
    )
    first = statistics.mean(looper.filter(turn__index=5).values_list("score", flat=True))
    repeats = statistics.mean(looper.filter(turn__index__gte=7).values_list("score", flat=True))
    assert first > repeats + 1
    # run again: nothing new
    before = ConversationRating.objects.count()
    again = conversation_demo(owner=owner, seed=7)
    assert again.summaries == [] and ConversationRating.objects.count() == before
    assert again.live_turns == demo.live_turns
