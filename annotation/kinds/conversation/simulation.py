"""The demo's simulated annotators on a conversation survey (`kinds.simulated`'s noise model).

A diligent annotator scores every whole-conversation question around the conversation's latent
quality (`meta["demo_quality"]`, else a stable hash of its turns), scores each bot turn around its
own latent quality where the conversation has one (`meta["demo_turn_quality"]`, else the
conversation's), flags a bot turn that repeats an earlier bot turn word for word as repetitive or a
contradiction (so it catches a gold conversation's plant, and flags those only then), and raises
the other flags rarely, more often the worse the conversation (or turn).
A careless one answers at random, quickly. Flags are sent as the page sends a ticked box ("on").
"""

import hashlib

from annotation.kinds.conversation.page import turns_by_conversation
from annotation.kinds.conversation.questions import PLANTED_FLAGS, split_aspects, turn_key
from annotation.kinds.simulated import NOISE_SD
from annotation.models import Conversation
from annotation.models.conversations import SYSTEM_SPEAKER


def conversation_quality(conversation, turns):
    quality = (conversation.meta or {}).get("demo_quality")
    if isinstance(quality, (int, float)):
        return min(max(float(quality), 0.0), 1.0)
    text = "\n".join(t for _, _, t in turns)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") / 2**32


def _turn_quality(by_turn, index, default):
    """A bot turn's latent quality (`meta["demo_turn_quality"]`, the demo's), else the conversation's."""
    value = by_turn.get(str(index)) if isinstance(by_turn, dict) else None
    return min(max(float(value), 0.0), 1.0) if isinstance(value, (int, float)) else default


def _scored(annotator, aspect, quality):
    low, high = aspect.scale_min, aspect.scale_max
    if annotator.careless:
        return annotator.rng.randint(low, high)
    value = low + (high - low) * quality + annotator.bias + annotator.rng.gauss(0, NOISE_SD)
    return min(max(round(value), low), high)


def simulated_conversation_answers(annotator, *, items, aspects):
    """`{item id: {"scores": {...}, "seconds": s}}` as the page would send them (flags: "1" when ticked)."""
    rng = annotator.rng
    whole, turn_scales, flags = split_aspects(list(aspects))
    turns = turns_by_conversation({item.conversation_id for item in items})
    meta = dict(Conversation.objects.filter(pk__in={i.conversation_id for i in items}).values_list("pk", "meta"))
    answers = {}
    for item in items:
        shown = [
            (index, speaker, item.broken_text if index == item.planted_turn else text)
            for index, speaker, text in turns.get(item.conversation_id, [])
        ]
        conversation_meta = meta.get(item.conversation_id) or {}
        quality = conversation_quality(Conversation(meta=conversation_meta), shown)
        by_turn = conversation_meta.get("demo_turn_quality") if isinstance(conversation_meta, dict) else None
        scores = {a.key: _scored(annotator, a, quality) for a in whole}
        said = set()
        for index, speaker, text in shown:
            if speaker != SYSTEM_SPEAKER:
                continue
            repeated = text.strip() in said
            said.add(text.strip())
            turn_quality = _turn_quality(by_turn, index, quality)
            for flag in flags:
                if annotator.careless:
                    ticked = rng.random() < 0.3
                elif flag.key in PLANTED_FLAGS:
                    ticked = repeated
                elif by_turn:
                    ticked = rng.random() < 0.8 * (1 - turn_quality) ** 2
                else:
                    ticked = rng.random() < 0.15 * (1 - quality)
                if ticked:
                    scores[turn_key(index, flag.key)] = "on"
            for aspect in turn_scales:
                caught = repeated and not annotator.careless
                scores[turn_key(index, aspect.key)] = (
                    aspect.scale_min if caught else _scored(annotator, aspect, turn_quality)
                )
        seconds = rng.uniform(2, 8) if annotator.careless else rng.uniform(40, 150)
        answers[item.pk] = {"scores": scores, "seconds": seconds}
    return answers
