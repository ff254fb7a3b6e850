"""How a report turns one response's human ratings into one score (issue 40): the plain mean (the
default), the mean of per-worker z-scores (WMT's direct assessment), or a mean weighted by each worker's
competence as MACE, Dawid-Skene or the ordinal spammer model (ratings read on their scale) estimate it.

Workers are kept apart per survey (a worker's scale use and competence are of one survey's task), and
both the z-scores and the competence are fitted on exactly the ratings the report uses (its surveys,
aspect and exclusions), so a figure computed with a weighting describes the same population as without.
"""

from itertools import pairwise

from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.normalise import weighted_item_scores, worker_z_scores
from annotation.quality.integrity.ordinal_spammer import ordinal_spammer

WEIGHTINGS = {
    "plain": "plain mean of the ratings",
    "zscore": "mean of per-worker z-scores (each worker's ratings standardised by their own mean and standard "
    "deviation within a survey, as WMT's direct assessment; workers whose ratings never vary are left out)",
    "mace": "mean weighted by each worker's competence from MACE (ratings as categories, fitted per survey)",
    "dawid_skene": "mean weighted by each worker's competence (expected accuracy) from Dawid-Skene (ratings as "
    "categories, fitted per survey)",
    "ordinal": "mean weighted by each worker's competence from the ordinal spammer model (the share of their "
    "ratings that follow the item, a careful rating allowed to miss by a little; fitted per survey)",
}
# Below this many answers on items rated twice or more, a survey's models have nothing to compare: its
# workers then weigh 1 each, and the note says so.
MIN_SHARED_ANSWERS = 10


def _competence(triples, weighting):
    """`{worker: competence}` of one survey's `(worker, item, score)` answers, or None when too few are
    shared. A worker's second rating of one response counts once in the fit (the models treat answers as
    independent); both still count in the weighted mean."""
    seen, answers, per_item = set(), [], {}
    for worker, item, score in triples:
        if (worker, item) not in seen:
            seen.add((worker, item))
            answers.append((worker, item, score))
            per_item[item] = per_item.get(item, 0) + 1
    if sum(n for n in per_item.values() if n > 1) < MIN_SHARED_ANSWERS or len({w for w, _, _ in answers}) < 2:
        return None
    labels = sorted({score for _, _, score in answers})
    if weighting == "ordinal":
        return ordinal_spammer(answers, labels=evenly_spaced(labels)).competence
    fitted = mace(answers, labels=labels) if weighting == "mace" else dawid_skene(answers, labels=labels)
    return fitted.competence


def evenly_spaced(values):
    """The scale the ordinal model reads from the scores given (sorted): from the lowest to the highest in
    steps of the smallest gap, so a point of the scale nobody gave still sits between its neighbours. Scores
    off that lattice (a scale not evenly spaced) are read as ordered positions instead."""
    if len(values) < 2:
        return list(values)
    step = min(b - a for a, b in pairwise(values))
    count = round((values[-1] - values[0]) / step)
    lattice = [values[0] + k * step for k in range(count + 1)]
    on_lattice = all(abs((v - values[0]) / step - round((v - values[0]) / step)) < 1e-9 for v in values)
    if not on_lattice or count > 200:
        return list(values)
    # The scores themselves where they fall on the lattice, so the model's labels match them exactly.
    by_position = {round((v - values[0]) / step): v for v in values}
    return [by_position.get(k, lattice[k]) for k in range(count + 1)]


def weighted_scores(rows, weighting):
    """`({response_id: (score, count)}, notes)` from `rows` of `(survey_id, annotator_id, response_id,
    score)`. `count` is the number of ratings the score rests on (z-scores: of the workers that have one).
    `notes`: sentences for the report about what the weighting could not do (a survey too small to fit)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r} (known: {', '.join(WEIGHTINGS)})")
    triples = [((survey, annotator), response, float(score)) for survey, annotator, response, score in rows]
    notes = []
    if weighting == "plain":
        return _with_counts(weighted_item_scores(triples, {}, default_weight=1.0), triples), notes
    if weighting == "zscore":
        z = worker_z_scores(triples)
        if z.constant_workers:
            notes.append(
                f"{len(z.constant_workers)} worker(s) whose ratings never vary have no z-score and are left out"
            )
        counts = {}
        for _, item, _ in z.scores:
            counts[item] = counts.get(item, 0) + 1
        return {item: (mean, counts[item]) for item, mean in z.item_means.items()}, notes
    weights = {}
    by_survey = {}
    for triple in triples:
        by_survey.setdefault(triple[0][0], []).append(triple)
    for survey, survey_triples in sorted(by_survey.items()):
        competence = _competence(survey_triples, weighting)
        if competence is None:
            notes.append(
                f"survey {survey}: too few ratings shared between workers to fit {weighting}; its workers weigh 1"
            )
            competence = {worker: 1.0 for worker, _, _ in survey_triples}
        weights.update(competence)
    return _with_counts(weighted_item_scores(triples, weights), triples), notes


def _with_counts(scores, triples):
    counts = {}
    for _, item, _ in triples:
        counts[item] = counts.get(item, 0) + 1
    return {item: (score, counts[item]) for item, score in scores.items() if score is not None}
