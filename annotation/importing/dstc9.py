"""DSTC9 Track 3's interactive-evaluation release (as kept in FlowScore's data) in RateLab's formats.

Each `chatbot<N>.json` is a list of conversations: `context` holds the dialogue as lines `User: …` /
`System: …`, beside it one score per aspect. Here system `chatbot<N>` gets conversations
`chatbot<N>-<k>` (k: 0-based place in its file), turns of speaker `user` and `system`, and one
whole-conversation rating per aspect by the worker `dstc9` (the release names no raters). Scales as
released: `overall` (from `human (overall)`) 1-5, `consistent` 0-1, every other aspect 1-3; aspect
names with a space get a hyphen (`error recovery` -> `error-recovery`). A score `N/A` is no rating.
"""

import json
from pathlib import Path

WORKER = "dstc9"
OVERALL_KEY = "human (overall)"
SCALES = {"overall": (1, 5), "consistent": (0, 1)}
OTHER_SCALE = (1, 3)
_SPEAKERS = {"User": "user", "System": "system"}


def aspect_key(name):
    return "overall" if name == OVERALL_KEY else name.strip().replace(" ", "-")


def aspect_scale(key):
    return SCALES.get(key, OTHER_SCALE)


def turns_of(context):
    """`[{"speaker", "text"}]` of one released `context`; a line of neither speaker continues the turn before."""
    turns = []
    for line in context.split("\n"):
        prefix, _, text = line.partition(": ")
        if prefix in _SPEAKERS:
            turns.append({"speaker": _SPEAKERS[prefix], "text": text})
        elif turns and line:
            turns[-1]["text"] += "\n" + line
    return turns


def convert(folder):
    """`(conversations, ratings)`: the records the import reads, for every `chatbot*.json` of `folder`."""
    conversations, ratings = [], []
    for path in sorted(Path(folder).glob("chatbot*.json")):
        system = path.stem
        with open(path, encoding="utf-8") as stream:
            released = json.load(stream)
        for k, item in enumerate(released):
            conversation_id = f"{system}-{k}"
            conversations.append(
                {"conversation_id": conversation_id, "system": system, "turns": turns_of(item["context"])}
            )
            for name, score in item.items():
                if name == "context" or not isinstance(score, int) or isinstance(score, bool):
                    continue  # "N/A": not rated
                ratings.append(
                    {"conversation_id": conversation_id, "worker": WORKER, "aspect": aspect_key(name), "score": score}
                )
    return conversations, ratings


def write_jsonl(records, path):
    with open(path, "w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
