"""A simulated annotator's written replies with the telemetry the page script would send (demo, tests).

Text from the integrity simulator's made-up vocabulary (`integrity.simulated_writing.TextSource`), so
independent replies share words but hardly a run of them, as real ones do; a careful writer's reply is
typed (`simulated_writing.typed`), a paster's is a longer text pasted whole from the clipboard
(`simulated_writing.pasted`), and a careless writer types a few hurried words.
"""

import json

import numpy as np

from annotation.kinds.simulated import PASTER
from annotation.quality.integrity import simulated_writing

PASTED_OPENING = "Certainly! Here is a thoughtful reply to the conversation:"


def simulated_replies(annotator, *, items):
    """`{item id: answer}` for one assignment's write items, each with its JSON telemetry."""
    rng = np.random.default_rng(annotator.rng.randrange(2**32))
    source = simulated_writing.TextSource(rng)
    answers = {}
    for item in items:
        if annotator.role == PASTER:
            text = f"{PASTED_OPENING} {source.answer(3)}"
            telemetry = simulated_writing.pasted(rng, len(text), typed_share=0.0)
        elif annotator.careless:
            text = source.answer(1)
            telemetry = simulated_writing.typed(rng, len(text))
        else:
            text = source.answer(2)
            telemetry = simulated_writing.typed(rng, len(text))
        answers[item.pk] = {
            "scores": {},
            "seconds": annotator.seconds(20, 90),
            "text": text[:2000],
            "telemetry": json.dumps({k: min(int(v), 1_000_000) for k, v in telemetry.items()}),
        }
    return answers
