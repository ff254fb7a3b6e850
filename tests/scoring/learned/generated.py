"""Small generated rating sets for the learned-evaluator tests: no download, no shared data."""

import numpy as np

from scoring.learned.data import Rated

WORDS = ("tea", "rain", "music", "garden", "train", "movie", "bread", "river", "chess", "winter")


def rated_set(*, contexts=12, per_context=3, seed=0, context_effect=0.0, features=True):
    """`contexts` x `per_context` rated responses.

    Each response's score follows its `quality` feature (plus noise); `context_effect` adds a
    per-context offset, so a model that memorised contexts would predict it. A `flaky` feature
    is missing for every fourth response, as a metric that could not score it.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(contexts):
        topic = WORDS[c % len(WORDS)]
        offset = context_effect * rng.normal()
        context = (f"do you like {topic}?", f"i do, {topic} number {c} is my favourite.")
        for k in range(per_context):
            quality = float(rng.uniform(0, 1))
            word = "great" if quality > 0.5 else "bad"
            noise = float(rng.normal(scale=0.3))
            score = float(np.clip(1 + 4 * quality + offset + noise, 1, 5))
            feature_values = {}
            if features:
                index = c * per_context + k
                feature_values = {
                    "quality": quality + float(rng.normal(scale=0.1)),
                    "noise": float(rng.normal()),
                    "flaky": None if index % 4 == 0 else quality + float(rng.normal(scale=0.5)),
                }
            rows.append(
                Rated(
                    context=context,
                    response=f"{word} {topic} talk, take {k}",
                    reference=f"{topic} is lovely",
                    features=feature_values,
                    score=score,
                    context_id=f"c{c:02d}",
                    system=f"s{k}",
                    response_id=c * per_context + k,
                )
            )
    return rows
