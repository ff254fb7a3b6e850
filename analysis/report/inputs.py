"""Load the vectors a report is computed from: one entry per rated response, in id order."""

import re
from dataclasses import dataclass, field

import numpy as np

from annotation.models import Reference, Response
from annotation.selectors import human_scores
from scoring.selectors.scores import metric_scores

WORD = re.compile(r"\w+(?:'\w+)?")


def word_count(text):
    return len(WORD.findall(text or ""))


@dataclass
class ReportInputs:
    response_ids: np.ndarray
    human: np.ndarray
    counts: np.ndarray
    systems: np.ndarray
    delta_words: np.ndarray
    metrics: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)  # response id -> response text
    references: dict = field(default_factory=dict)  # context id -> first reference
    contexts: dict = field(default_factory=dict)  # response id -> context id
    weighting: str = "plain"  # how each response's ratings became its human score (annotation.quality.weighting)
    weighting_notes: list = field(default_factory=list)  # what the weighting could not do


def report_inputs(*, dataset, surveys=None, aspect="overall", systems=None, apply_exclusions=True, weighting="plain"):
    """Align human scores, metric scores, systems and lengths on the rated responses.

    Only responses with at least one accepted rating are used; `systems` (names) limits them.
    Metric values missing or None become NaN (each statistic then uses the items it has).
    """
    notes = []
    scores = human_scores(
        dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions, weighting=weighting,
        notes=notes,
    )
    # Filtered in Python, not with pk__in: SQLite limits the number of query parameters.
    responses = Response.objects.filter(context__dataset=dataset)
    if systems:
        responses = responses.filter(system__name__in=list(systems))
    rows = [row for row in responses.values_list("pk", "system__name", "text", "context_id") if row[0] in scores]
    rows.sort()
    references = {}
    for context_id, text in (
        Reference.objects.filter(context__dataset=dataset).order_by("-position").values_list("context_id", "text")
    ):
        references[context_id] = text  # ordered by descending position: the first reference wins
    ids = np.array([row[0] for row in rows], dtype=np.int64)
    human = np.array([scores[row[0]][0] for row in rows], dtype=float)
    counts = np.array([scores[row[0]][1] for row in rows], dtype=np.int64)
    reference_words = {context: word_count(text) for context, text in references.items()}
    delta = np.array(
        [abs(word_count(text) - reference_words[context]) if context in reference_words else np.nan
         for _, _, text, context in rows],
        dtype=float,
    )  # fmt: skip
    metrics = {}
    for name, values in sorted(metric_scores(dataset=dataset).items()):
        # Vectorised alignment: ids are sorted, so a binary search places each score (None -> NaN).
        score_ids = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
        score_values = np.array(list(values.values()), dtype=float)
        position = np.minimum(np.searchsorted(ids, score_ids), max(ids.size - 1, 0))
        known = (ids[position] == score_ids) if ids.size else np.zeros(score_ids.size, dtype=bool)
        column = np.full(ids.size, np.nan)
        column[position[known]] = score_values[known]
        if np.isfinite(column).any():
            metrics[name] = column
    return ReportInputs(
        response_ids=ids,
        human=human,
        counts=counts,
        systems=np.array([row[1] for row in rows], dtype=object),
        delta_words=delta,
        metrics=metrics,
        texts={row[0]: row[2] for row in rows},
        references=references,
        contexts={row[0]: row[3] for row in rows},
        weighting=weighting,
        weighting_notes=notes,
    )


def response_contexts(inputs):
    """The context id of each rated response, aligned with the report's vectors."""
    return np.array([inputs.contexts[int(i)] for i in inputs.response_ids], dtype=np.int64)
