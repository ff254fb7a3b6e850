"""Versioned prompt templates and the hash that keys the response cache.

A template's version changes whenever its wording does, so cached replies to the old wording
are never reused for the new one (the cache is keyed by judge, template version and prompt hash).
"""

import hashlib
import json
from dataclasses import dataclass

RATING = "rating"
RATING_WITH_REFERENCE = "rating-with-reference"
PAIRWISE = "pairwise"


@dataclass(frozen=True)
class Template:
    name: str
    version: int
    kind: str  # "rating" (a score 1-5) or "pairwise" (A or B)
    system: str
    user: str

    @property
    def key(self):
        return f"{self.name}@{self.version}"


_RATING_SYSTEM = (
    "You are an expert evaluator of dialogue systems. You rate how appropriate a response is as the "
    "next turn of a conversation: relevant, coherent, fluent and natural. Answer with one line "
    "'Score: N' where N is an integer from 1 (very poor) to 5 (excellent), and nothing else."
)
_PAIRWISE_SYSTEM = (
    "You are an expert evaluator of dialogue systems. You compare two candidate responses to the "
    "same conversation and choose the more appropriate next turn. Answer with one line "
    "'Winner: A' or 'Winner: B', and nothing else."
)

TEMPLATES = {
    t.name: t
    for t in (
        Template(
            RATING,
            1,
            RATING,
            _RATING_SYSTEM,
            "Conversation:\n{context}\n\nResponse:\n{response}\n\nRate the response.",
        ),
        Template(
            RATING_WITH_REFERENCE,
            1,
            RATING,
            _RATING_SYSTEM,
            "Conversation:\n{context}\n\nA reference response written by a person:\n{reference}\n\n"
            "Response to rate:\n{response}\n\nRate the response (it need not match the reference).",
        ),
        Template(
            PAIRWISE,
            1,
            PAIRWISE,
            _PAIRWISE_SYSTEM,
            "Conversation:\n{context}\n\nResponse A:\n{response_a}\n\nResponse B:\n{response_b}\n\n"
            "Which response is the better next turn?",
        ),
    )
}


def get_template(name):
    try:
        return TEMPLATES[name]
    except KeyError:
        raise KeyError(f"unknown judge template {name!r}; choose one of {', '.join(TEMPLATES)}") from None


def format_context(turns):
    """The conversation so far, one turn a line, speakers alternating when the data names none."""
    lines = []
    for position, turn in enumerate(turns):
        if isinstance(turn, dict):
            speaker, text = turn.get("speaker") or ("A" if position % 2 == 0 else "B"), turn.get("text", "")
        else:
            speaker, text = ("A" if position % 2 == 0 else "B"), str(turn)
        lines.append(f"{speaker}: {text}")
    return "\n".join(lines) if lines else "(no previous turns)"


def rating_messages(template, *, context, response, reference=""):
    """Chat messages asking for a 1-5 rating of `response` (context: a list of turns)."""
    user = template.user.format(context=format_context(context), response=response, reference=reference or "")
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]


def pairwise_messages(template, *, context, first, second):
    """Chat messages asking which of two responses is better; `first` is shown as A."""
    user = template.user.format(context=format_context(context), response_a=first, response_b=second)
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]


def prompt_hash(messages):
    """sha256 of the messages as canonical JSON: the same prompt always gets the same hash."""
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# --- a whole conversation (issue 37's conversation level) ----------------------------------------
# Not one of TEMPLATES (a judge's own choice of prompt for responses): any rating judge rates whole
# conversations with this one, as it rates conversation turns with its own template. Its key keys
# the cache like theirs; the aspect and its scale are in the prompt, so each aspect is its own entry.
CONVERSATION = Template(
    "whole-conversation",
    1,
    RATING,
    "You are an expert evaluator of dialogue systems. You read a whole conversation between a "
    "dialogue system (the speaker 'system') and its partner, and rate the system's part in it on "
    "one aspect. The partner's turns are context, not rated. Answer with one line 'Score: N' where "
    "N is an integer from {low} ({low_label}) to {high} ({high_label}), and nothing else.",
    "Conversation:\n{transcript}\n\nAspect: {aspect}\n{question}\n\nRate the system on this aspect "
    "from {low} to {high}.",
)


def transcript(turns):
    """The conversation, one turn a line, each labelled with its speaker as the data names it
    ('system' for the evaluated system), so the judge knows whose turns it rates."""
    lines = [f"{turn['speaker']}: {turn['text']}" for turn in turns]
    return "\n".join(lines) if lines else "(no turns)"


def conversation_messages(template, *, turns, aspect, question="", low=1, high=5, low_label="", high_label=""):
    """Chat messages asking for a score of the system's part in a whole conversation on `aspect`
    (`question`: how the study words it), on the aspect's own scale `low`-`high`."""
    ends = {"low": low, "high": high, "low_label": low_label or "worst", "high_label": high_label or "best"}
    system = template.system.format(**ends)
    user = template.user.format(transcript=transcript(turns), aspect=aspect, question=question or "", **ends)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
