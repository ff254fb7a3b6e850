"""Quality control of a pairwise survey: agreement on the three labels, position bias per
annotator, and the gold and swapped-repeat checks.

Labels are put in one orientation before comparing annotators: for each (context, pair of
responses, aspect) item, "first" means the response with the lower id won, "second" the other,
"tie" a tie, whichever side each annotator saw it on. Agreement: Cohen's kappa for each pair of
annotators with at least `min_pair_overlap` shared items (unweighted: the labels are nominal),
Fleiss' kappa (which assumes the same number of raters per item: it uses the items that have the
most common number, at least two), and Krippendorff's alpha (nominal; any number of raters).
Position bias: each annotator's share of decisive choices that went to the left reply, with a
two-sided binomial test against one half.
"""

import collections
import importlib
from statistics import median

import numpy as np

from annotation.models import Assignment, AttentionAnswer, HITItem, PairwiseJudgement

LABELS = {"first": 0, "tie": 1, "second": 2}
SCALE = (0, 1, 2)


def _agreement():
    # The agreement module imports scipy.stats and scikit-learn: loaded when a report is computed.
    return importlib.import_module("annotation.quality.agreement")


def _oriented(row):
    context, response_a, response_b, aspect, winner = row[:5]
    first, second = sorted((response_a, response_b))
    if winner == "tie":
        label = "tie"
    else:
        won = response_a if winner == "a" else response_b
        label = "first" if won == first else "second"
    return (context, first, second, aspect), LABELS[label]


def judgement_rows(survey, aspect="overall"):
    """The survey's judgements on `aspect` as the exclusion rules read ratings (`data.rating_rows`).

    Each row's `response_id` is the oriented item `(context, first, second, aspect)` and its
    `score` the oriented label, so kappa is taken by response, not by side; `seconds` is the
    judgement's time. Rejected assignments are left out, as for ratings.
    """
    rows = (
        PairwiseJudgement.objects.filter(survey=survey, aspect=aspect)
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .values_list("context_id", "response_a_id", "response_b_id", "aspect", "winner", "annotator_id", "seconds")
        .order_by("id")
    )
    result = []
    for row in rows:
        item, label = _oriented(row)
        result.append({"annotator_id": row[5], "response_id": item, "score": label, "seconds": row[6]})
    return result


def fleiss_kappa(items):
    """Fleiss' kappa of `items` (each a list of category indices, one per rater), on the items with
    the most common number of raters; None when undefined (fewer than two items, or no spread)."""
    counts = collections.Counter(len(labels) for labels in items if len(labels) >= 2)
    if not counts:
        return None
    raters = counts.most_common(1)[0][0]
    table = np.array(
        [np.bincount(labels, minlength=len(SCALE)) for labels in items if len(labels) == raters], dtype=float
    )
    if len(table) < 2:
        return None
    per_item = ((table * (table - 1)).sum(axis=1)) / (raters * (raters - 1))
    shares = table.sum(axis=0) / table.sum()
    expected = float((shares**2).sum())
    if expected >= 1:
        return None
    return float((per_item.mean() - expected) / (1 - expected))


def _position_bias(rows, labels):
    stats = importlib.import_module("scipy.stats")
    decisive = collections.defaultdict(lambda: [0, 0])  # annotator: [left chosen, decisive]
    for row in rows:
        if row[6] and row[4] != "tie":
            decisive[row[5]][1] += 1
            decisive[row[5]][0] += row[4] == "a"
    result = []
    for annotator, (left, total) in sorted(decisive.items(), key=lambda kv: labels[kv[0]]):
        result.append(
            {
                "worker": labels[annotator],
                "left_share": left / total,
                "decisive": total,
                "p_value": float(stats.binomtest(left, total).pvalue),
            }
        )
    return result


def _checks(survey, labels):
    answers = AttentionAnswer.objects.filter(
        assignment__hit__survey=survey, item__kind__in=[HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT]
    ).values_list("assignment__annotator_id", "item__kind", "passed")
    per = collections.defaultdict(lambda: {"gold": [0, 0], "repeat": [0, 0]})
    for annotator, kind, passed in answers:
        key = "gold" if kind == HITItem.Kind.PAIR_GOLD else "repeat"
        per[annotator][key][0] += passed
        per[annotator][key][1] += 1
    return {
        labels.get(annotator, str(annotator)): {
            "gold_passed": gold[0],
            "gold_total": gold[1],
            "consistent": repeat[0],
            "repeats": repeat[1],
            "consistency": repeat[0] / repeat[1] if repeat[1] else None,
        }
        for annotator, checks in per.items()
        for gold, repeat in [(checks["gold"], checks["repeat"])]
    }


def pairwise_quality(*, survey):
    """The survey's pairwise quality figures (JSON-ready), or None if it has no judgements.

    `annotators`: per worker, `left_share`, `decisive`, `p_value` (position bias; absent for
    imported judgements, whose sides are unknown) and `gold_passed`, `gold_total`, `consistent`,
    `repeats`, `consistency` (checks; absent without collected HITs).
    """
    rows = list(
        PairwiseJudgement.objects.filter(survey=survey).values_list(
            "context_id", "response_a_id", "response_b_id", "aspect", "winner", "annotator_id", "position_known"
        )
    )
    if not rows:
        return None
    annotator_ids = {row[5] for row in rows}
    labels = dict(survey.pairwise_judgements.values_list("annotator_id", "annotator__worker_id").distinct())
    labels = {pk: labels.get(pk, str(pk)) for pk in annotator_ids}
    ratings = [(labels[row[5]], *_oriented(row)) for row in rows]
    agreement = _agreement()
    pairs = agreement.pairwise_agreement(ratings, scale=SCALE, min_overlap=survey.min_pair_overlap)
    used = [pair.kappa for pair in pairs if pair.used]
    per_item = collections.defaultdict(list)
    for _, item, label in ratings:
        per_item[item].append(label)
    checks = _checks(survey, labels)
    bias = {row["worker"]: row for row in _position_bias(rows, labels)}
    annotators = [
        {"worker": worker, **bias.get(worker, {}), **checks.get(worker, {})}
        for worker in sorted(set(labels.values()))
    ]
    consistency = [c["consistency"] for c in checks.values() if c["consistency"] is not None]
    return {
        "n_judgements": len(rows),
        "n_annotators": len(annotator_ids),
        "labels": "a judgement's winner, oriented by response id: first, tie, second",
        "pairs": [pair.as_dict() for pair in pairs],
        "median_kappa": median(used) if used else None,
        "fleiss_kappa": fleiss_kappa(list(per_item.values())),
        "alpha": agreement.krippendorff_alpha(ratings, scale=SCALE, level="nominal"),
        "annotators": annotators,
        "consistency": sum(consistency) / len(consistency) if consistency else None,
    }
