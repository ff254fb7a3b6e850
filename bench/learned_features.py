"""The scores a dataset would already hold, computed offline for the stacked evaluator's bench.

Every feature comes from the repository's pure metric engine (`scoring.metrics.score`): the
reference-based metrics against the reference, and the same families against the last context
turn (prefix `ctx_`: how close the response stays to what it answers), plus lengths. None is
learned from the ratings, so none can leak a test fold's scores into training.
"""

from scoring import metrics

AGAINST_REFERENCE = (
    "bleu1",
    "bleu2",
    "bleu4",
    "rouge_l",
    "meteor",
    "cider",
    "embedding_average",
    "greedy_matching",
    "vector_extrema",
    "sentence_cosine",
    "bertscore_f1",
    "response_len",
    "reference_len",
    "length_diff",
)
AGAINST_CONTEXT = (
    "bleu1",
    "rouge_l",
    "embedding_average",
    "greedy_matching",
    "vector_extrema",
    "sentence_cosine",
    "bertscore_f1",
    "reference_len",
    "length_diff",
)


def metric_features(examples):
    """One {feature: score or None} dict per example (ADEM-style: context, reference, response)."""
    hyps = [e.response for e in examples]
    by_reference = metrics.score(hyps, [[e.reference] for e in examples], list(AGAINST_REFERENCE))
    last_turns = [[e.context[-1] if e.context else ""] for e in examples]
    by_context = metrics.score(hyps, last_turns, list(AGAINST_CONTEXT))
    columns = {**by_reference, **{f"ctx_{name}": values for name, values in by_context.items()}}
    columns["context_turns"] = [float(len(e.context)) for e in examples]
    return [{name: values[i] for name, values in columns.items()} for i in range(len(examples))]
