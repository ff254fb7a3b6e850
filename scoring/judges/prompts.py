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
