"""A toy dataset and a judge pointed at the test's chat server, for the judge tests."""

import hashlib

from scoring.models import Judge

RECORDS = [
    {
        "context_id": f"j{i}",
        "context": ["hi there", f"what did you do on day {i}?"],
        "references": ["i went out"] if i != 5 else [],
        "responses": [
            {"system": "seq2seq", "text": ["i went out", "nothing", "i do not know", "the park"][i % 4]},
            {"system": "human", "text": f"i walked the dog on day {i}"},
        ],
    }
    for i in range(6)
]


def score_for(user_message):
    """What the test server answers for a prompt: a score fixed by the prompt's text."""
    return int(hashlib.sha256(user_message.encode()).hexdigest(), 16) % 5 + 1


def scoring_server(body, nth):
    return f"Score: {score_for(body['messages'][-1]['content'])}"


def make_judge(owner, server, name="local", **fields):
    return Judge.objects.create(owner=owner, name=name, base_url=server.base_url, model="judge-model", **fields)
