"""Every reference-free feature of a list of responses, as one `{name: value}` dict per response."""

from scoring.learned.reference_free import DEFAULT_PRECISION, next_utterance, semantic
from scoring.learned.reference_free.surface import surface_features


def reference_free_features(responses, *, encode=None, heads=None, precision=DEFAULT_PRECISION):
    """`precision` of the sentence vectors (reference_free.PRECISIONS); `encode(texts) -> vectors` and
    `heads` (next_utterance.heads()) may be given by tests."""
    responses = list(responses)
    if not responses:
        return []
    response_vectors, last_vectors, context_vectors = semantic.pair_vectors(
        responses, encode=encode, precision=precision
    )
    columns = semantic.cosine_features(response_vectors, last_vectors, context_vectors)
    heads = heads if heads is not None else next_utterance.heads(precision=precision)
    columns.update(next_utterance.logits(heads, response_vectors, last_vectors, context_vectors))
    return [
        {**surface_features(r.context, r.response), **{name: float(values[i]) for name, values in columns.items()}}
        for i, r in enumerate(responses)
    ]
