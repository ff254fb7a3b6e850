"""What the stacked kind reads for a response: the scores the dataset already has, and lengths.

Excluded: every `adem:` and `learned:` score. Those models were trained on ratings, possibly
these very ratings and on every fold at once; stacking them would hand each fold's test ratings
to its training rows through the feature. LLM judges (`judge:`) are kept: a judge is prompted,
never fitted to the ratings. Lengths (words of the response and of the context) are computed
here, so a dataset with no metric computed yet still has something to stack.
"""

from collections import defaultdict

from scoring.models import MetricScore
from scoring.models.adem import ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX

EXCLUDED_PREFIXES = (ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX)
RESPONSE_WORDS = "length:response_words"
CONTEXT_WORDS = "length:context_words"


def length_features(context, response):
    return {
        RESPONSE_WORDS: float(len(response.split())),
        CONTEXT_WORDS: float(sum(len(turn.split()) for turn in context)),
    }


def stored_scores(response_ids):
    """`{response id: {metric: value or None}}` of the stored scores a stacked model may read."""
    found = defaultdict(dict)
    rows = MetricScore.objects.filter(response_id__in=list(response_ids)).values_list("response_id", "metric", "value")
    for response_id, metric, value in rows.iterator(chunk_size=5000):
        if not metric.startswith(EXCLUDED_PREFIXES):
            found[response_id][metric] = value
    return found


def response_features(rows):
    """`{response id: features}` for (response id, context turns, response text) rows."""
    rows = list(rows)
    stored = stored_scores(pk for pk, _, _ in rows)
    return {pk: {**stored.get(pk, {}), **length_features(context, text)} for pk, context, text in rows}
