"""Turn the shared-data loaders' import records into ADEM examples without a database."""

from collections import defaultdict

import numpy as np

from scoring.adem.pipeline import Example


def examples_from_records(dataset_records, rating_records):
    scores = defaultdict(list)
    for rating in rating_records:
        scores[(rating["context_id"], rating["system"])].append(rating["score"])
    examples = []
    for record in dataset_records:
        for response in record["responses"]:
            rated = scores.get((record["context_id"], response["system"]))
            if rated:
                examples.append(
                    Example(
                        context=list(record["context"]),
                        reference=record["references"][0],
                        response=response["text"],
                        score=float(np.mean(rated)),
                        context_id=record["context_id"],
                        system=response["system"],
                    )
                )
    return examples
