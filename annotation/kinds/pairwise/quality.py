"""Quality control of a pairwise survey: agreement on the three labels, position bias per
annotator, and the gold and swapped-repeat checks.

Labels are put in one orientation before comparing annotators: for each (context, pair of
responses, aspect) item, "first" means the response with the lower id won, "second" the other,
"tie" a tie, whichever side each annotator saw it on. Agreement: Cohen's kappa for each pair of
annotators with at least `min_pair_overlap` shared items (unweighted: the labels are nominal),
Fleiss' kappa (which assumes the same number of raters per item: it uses the items that have the
most common number, at least two), and Krippendorff's alpha (nominal; any number of raters).
Agreement pools every question (aspect) the survey asks: each (pair, aspect) is an item, so an
annotator's kappa covers all their answers; the figures are also given per aspect.
Position bias: each annotator's share of decisive choices on the overall question (one per pair
shown, so the count is of independent choices) that went to the left reply, with a two-sided
binomial test against one half. Rejected assignments are left out of every figure the rules read.
"""

import collections
import importlib
from statistics import median

import numpy as np

from annotation.models import Aspect, Assignment, AttentionAnswer, HITItem, PairwiseJudgement

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


def _kept(survey):
    return PairwiseJudgement.objects.filter(survey=survey).exclude(assignment__status=Assignment.Status.REJECTED)


def judgement_rows(survey, aspect=None):
    """The survey's judgements (on `aspect`, or on every aspect when None) as the exclusion rules
    read ratings (`data.rating_rows`).

    Each row's `response_id` is the oriented item `(context, first, second, aspect)` and its
    `score` the oriented label, so kappa is taken by response, not by side, and answers to
    different questions about one pair are different items; `seconds` is the judgement's time.
    Rejected assignments are left out, as for ratings.
    """
    rows = _kept(survey)
    if aspect is not None:
        rows = rows.filter(aspect=aspect)
    rows = rows.values_list(
        "context_id", "response_a_id", "response_b_id", "aspect", "winner", "annotator_id", "seconds"
    ).order_by("id")
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


def position_counts(survey):
    """`{annotator_id: (left chosen, decisive)}`: choices of a side (not ties) on the overall
    question whose side is known (collected, not imported), rejected assignments left out."""
    rows = (
        _kept(survey)
        .filter(aspect=Aspect.OVERALL, position_known=True)
        .exclude(winner="tie")
        .values_list("annotator_id", "winner")
        .order_by()
    )
    counts = collections.defaultdict(lambda: [0, 0])
    for annotator_id, winner in rows:
        counts[annotator_id][0] += winner == "a"
        counts[annotator_id][1] += 1
    return {annotator_id: tuple(pair) for annotator_id, pair in counts.items()}


def repeat_counts(survey):
    """`{annotator_id: (consistent, repeats)}` over the swapped repeats of not-rejected assignments."""
    answers = (
        AttentionAnswer.objects.filter(assignment__hit__survey=survey, item__kind=HITItem.Kind.PAIR_REPEAT)
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .values_list("assignment__annotator_id", "passed")
        .order_by()
    )
    counts = collections.defaultdict(lambda: [0, 0])
    for annotator_id, passed in answers:
        counts[annotator_id][0] += bool(passed)
        counts[annotator_id][1] += 1
    return {annotator_id: tuple(pair) for annotator_id, pair in counts.items()}


def _position_bias(survey, labels):
    stats = importlib.import_module("scipy.stats")
    result = []
    for annotator, (left, total) in sorted(position_counts(survey).items(), key=lambda kv: labels[kv[0]]):
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
    answers = (
        AttentionAnswer.objects.filter(
            assignment__hit__survey=survey, item__kind__in=[HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT]
        )
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .values_list("assignment__annotator_id", "item__kind", "passed")
    )
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


def _agreement_figures(ratings, agreement, min_overlap):
    """Median Cohen's kappa, Fleiss' kappa and Krippendorff's alpha of `(worker, item, label)` triples."""
    pairs = agreement.pairwise_agreement(ratings, scale=SCALE, min_overlap=min_overlap)
    used = [pair.kappa for pair in pairs if pair.used and pair.kappa is not None]
    per_item = collections.defaultdict(list)
    for _, item, label in ratings:
        per_item[item].append(label)
    figures = {
        "n_items": len(per_item),
        "n_judgements": len(ratings),
        "median_kappa": median(used) if used else None,
        "n_used_pairs": len(used),
        "fleiss_kappa": fleiss_kappa(list(per_item.values())),
        "alpha": agreement.krippendorff_alpha(ratings, scale=SCALE, level="nominal"),
    }
    return pairs, figures


def _aspects(survey, ratings, agreement):
    """Agreement per question, in the survey's order of questions."""
    questions = dict(Aspect.objects.filter(survey=survey).values_list("key", "question"))
    order = list(Aspect.objects.filter(survey=survey).order_by("position").values_list("key", flat=True))
    asked = {item[3] for _, item, _ in ratings}
    keys = [key for key in order if key in asked] + sorted(asked - set(order))
    result = []
    for key in keys:
        subset = [triple for triple in ratings if triple[1][3] == key]
        _, figures = _agreement_figures(subset, agreement, survey.min_pair_overlap)
        result.append({"aspect": key, "question": questions.get(key, ""), **figures})
    return result


def pairwise_quality(*, survey):
    """The survey's pairwise quality figures (JSON-ready), or None if it has no judgements.

    `annotators`: per worker, `left_share`, `decisive`, `p_value` (position bias; absent for
    imported judgements, whose sides are unknown) and `gold_passed`, `gold_total`, `consistent`,
    `repeats`, `consistency` (checks; absent without collected HITs). `aspects`: the agreement
    figures per question (`aspect`, `question`, `n_items`, `n_judgements`, `median_kappa`,
    `n_used_pairs`, `fleiss_kappa`, `alpha`); the top-level ones pool every question.
    Judgements of rejected assignments are left out, as the rules leave them out.
    """
    rows = list(
        _kept(survey).values_list("context_id", "response_a_id", "response_b_id", "aspect", "winner", "annotator_id")
    )
    if not rows:
        return None
    annotator_ids = {row[5] for row in rows}
    labels = dict(survey.pairwise_judgements.values_list("annotator_id", "annotator__worker_id").distinct())
    labels = {pk: labels.get(pk, str(pk)) for pk in annotator_ids}
    ratings = [(labels[row[5]], *_oriented(row)) for row in rows]
    agreement = _agreement()
    pairs, pooled = _agreement_figures(ratings, agreement, survey.min_pair_overlap)
    checks = _checks(survey, labels)
    bias = {row["worker"]: row for row in _position_bias(survey, labels)}
    annotators = [
        {"worker": worker, **bias.get(worker, {}), **checks.get(worker, {})} for worker in sorted(set(labels.values()))
    ]
    consistency = [c["consistency"] for c in checks.values() if c["consistency"] is not None]
    return {
        "n_judgements": len(rows),
        "n_annotators": len(annotator_ids),
        "labels": "a judgement's winner, oriented by response id: first, tie, second",
        "pairs": [pair.as_dict() for pair in pairs],
        "median_kappa": pooled["median_kappa"],
        "fleiss_kappa": pooled["fleiss_kappa"],
        "alpha": pooled["alpha"],
        "n_items": pooled["n_items"],
        "aspects": _aspects(survey, ratings, agreement),
        "annotators": annotators,
        "consistency": sum(consistency) / len(consistency) if consistency else None,
    }
