"""What a conversation survey asks by default, and how its questions split between the whole
conversation and each system turn.

Defaults: the whole-conversation aspects of FED and DSTC9's interactive evaluation (coherent,
consistent, engaging, informative, overall impression), each 1-5 with labelled ends, and ParlAI's
model-chat per-turn annotations as yes/no flags. An aspect on a 0-1 scale asked per turn is a flag:
a checkbox, unticked meaning "no".
"""

WHOLE_ASPECTS = (
    ("overall", "Overall, how good was the bot in this conversation?", "Very poor", "Excellent"),
    ("coherent", "Is the bot coherent: does it follow what was said?", "Not at all", "Completely"),
    ("consistent", "Is the bot consistent: does it never contradict itself?", "Often contradicts itself", "Never"),
    ("engaging", "Is the bot engaging: would you like to keep talking to it?", "Dull", "Very engaging"),
    ("informative", "Is the bot informative: does it say something worth knowing?", "Says nothing", "Very informative"),
)
# Labels as short as ParlAI's: five of them sit under every bot turn (the page's weight on a phone).
TURN_FLAGS = (
    ("contradiction", "Contradiction"),
    ("repetitive", "Repetitive"),
    ("off-topic", "Off-topic"),
    ("not-sensible", "Not sensible"),
    ("factually-wrong", "Factually wrong"),
)
# The flags a planted repetition should raise (the gold check: `answers.gold_passed`).
PLANTED_FLAGS = ("repetitive", "contradiction")


def default_aspect_specs(scales=None):
    """The aspects of a new conversation survey, as `services.surveys` reads them (overall first).

    `scales`: the dataset's scales by aspect (`{"consistent": (0, 1)}`, from imported ratings, as
    DSTC9's release rates most aspects 1-3): a default aspect the dataset has takes its scale, so
    the crowd's scores stand beside the imported ones."""
    scales = scales or {}
    specs = []
    for key, question, low_label, high_label in WHOLE_ASPECTS:
        low, high = scales.get(key, (1, 5))
        labels = {str(low): low_label, str(high): high_label}
        specs.append({"key": key, "question": question, "scale_min": low, "scale_max": high, "scale_labels": labels})
    specs += [
        {"key": key, "question": label, "scale_min": 0, "scale_max": 1, "per_turn": True} for key, label in TURN_FLAGS
    ]
    return specs


def is_flag(aspect):
    """Whether an aspect (row or scale dict) is a yes/no flag on each system turn."""
    per_turn = aspect["per_turn"] if isinstance(aspect, dict) else aspect.per_turn
    low, high = (aspect["min"], aspect["max"]) if isinstance(aspect, dict) else (aspect.scale_min, aspect.scale_max)
    return per_turn and (low, high) == (0, 1)


def turn_key(index, key):
    """The answer key of question `key` on turn `index` ("t3-repetitive"): field score-<item>-t3-repetitive."""
    return f"t{index}-{key}"


def split_aspects(aspects):
    """`(whole, turn_scales, flags)` of a survey's aspects (rows or dicts, in order)."""
    whole = [a for a in aspects if not (a["per_turn"] if isinstance(a, dict) else a.per_turn)]
    per_turn = [a for a in aspects if a not in whole]
    flags = [a for a in per_turn if is_flag(a)]
    return whole, [a for a in per_turn if a not in flags], flags
