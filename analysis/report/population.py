"""Which ratings and judgements a report describes, counted within its filters.

A report is computed for one population: the surveys it reads, one aspect, the systems its filter
keeps, and either the accepted answers (exclusions applied) or every answer (exclusions ignored).
Every count and agreement figure it prints is of that population, and says which it is:

- `population_counts`: answers before exclusions within the same systems filter, and the excluded
  annotators whose answers in that population were left out (none when exclusions are ignored);
- `population_agreement`: median Cohen's kappa and Krippendorff's alpha of exactly the ratings the
  correlations use (the split-half ceiling's rows), not quality control's survey-wide figures;
- `population_text`: the sentence the page, the zip's README and the LaTeX header print;
- `kept_systems`: which systems a filter keeps (the pairwise reference side with them).

Quality control's own tables (agreement between annotator pairs, per-annotator kappas) stay
survey-wide: they are the evidence that decided the exclusions, and say so.
"""

from statistics import median

from annotation.kinds.pairwise.selectors import accepted_judgements
from annotation.models import REFERENCE_SYSTEM_NAME, Survey
from annotation.quality import agreement, data
from annotation.quality.selectors import accepted_ratings


def kept_systems(systems):
    """The system names a `systems` filter keeps (the reference side with them), or None for all:
    the rule every count and every pairwise figure of a report applies."""
    return None if not systems else {*systems, REFERENCE_SYSTEM_NAME}


def population_counts(*, dataset, surveys, aspect, systems, apply_exclusions):
    """`{"n_ratings_before_exclusions", "n_judgements_before_exclusions", "excluded_annotators",
    "excluded_annotator_refs"}` within the report's surveys, aspect and systems filter.

    Before exclusions means every answer the platform confirmed (work it has not confirmed never
    counts). The excluded annotators are those whose answers in this population the exclusions
    left out: an annotator excluded from a survey but with no rating of the filtered systems is
    not named. With exclusions ignored nobody is excluded and the list is empty.
    `excluded_annotator_refs` gives each the survey and annotator ids, for the owner's links to
    the quality page.
    """
    ratings = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=False)
    judgements = accepted_judgements(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=False)
    if systems:
        ratings = ratings.filter(response__system__name__in=list(systems))
        kept = kept_systems(systems)  # the reference side stays, as in the pairwise section
        judgements = judgements.filter(response_a__system__name__in=kept, response_b__system__name__in=kept)
    refs = []
    if apply_exclusions:
        scope = Survey.objects.filter(dataset=dataset)
        if surveys is not None:
            scope = scope.filter(pk__in=[s.pk for s in surveys])
        excluded = data.excluded_annotators(surveys=scope)
        present = set(ratings.values_list("survey_id", "annotator_id").distinct())
        present |= set(judgements.values_list("survey_id", "annotator_id").distinct())
        pairs = sorted((sid, aid) for sid, ids in excluded.items() for aid in ids if (sid, aid) in present)
        labels = data.annotator_labels({aid for _sid, aid in pairs})
        refs = [{"worker": labels[aid], "survey_id": sid, "annotator_id": aid} for sid, aid in pairs]
    return {
        "n_ratings_before_exclusions": ratings.count(),
        "n_judgements_before_exclusions": judgements.count(),
        "excluded_annotators": list(dict.fromkeys(ref["worker"] for ref in refs)),
        "excluded_annotator_refs": refs,
    }


def population_agreement(*, dataset, surveys, aspect, apply_exclusions, response_ids):
    """Median Cohen's kappa and Krippendorff's alpha over exactly the ratings the report uses: its
    surveys, aspect and systems (`response_ids`, the responses it correlates), accepted or all as
    its exclusion setting says.

    As quality control computes them: kappa per pair of annotators of the same survey (each
    survey's weighting and minimum overlap; the median over the used pairs); alpha over all the
    ratings, each survey's annotators kept apart (ordinal, on the first survey's scale).
    """
    wanted = {int(pk) for pk in response_ids}
    rows = [
        row
        for row in accepted_ratings(
            dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions
        ).values_list("survey_id", "annotator_id", "response_id", "score")
        if row[2] in wanted
    ]
    by_survey = {}
    for survey_id, annotator_id, response_id, score in rows:
        by_survey.setdefault(survey_id, []).append((annotator_id, response_id, score))
    kappas, triples, scale, weightings = [], [], None, set()
    for survey in Survey.objects.filter(pk__in=by_survey).order_by("created_at", "pk"):
        survey_scale = data.survey_scale(survey, aspect)
        scale = scale or survey_scale
        survey_rows = by_survey[survey.pk]
        triples += [((survey.pk, a), item, score) for a, item, score in survey_rows]
        try:
            pairs = agreement.pairwise_agreement(survey_rows, scale=survey_scale, min_overlap=survey.min_pair_overlap)
        except ValueError:  # a score off the survey's scale: no kappa rather than a wrong one
            continue
        weightings.add(survey.kappa_weighting)
        kappas += [agreement.pair_kappa(p, survey.kappa_weighting) for p in pairs if p.used]
    try:
        alpha = agreement.krippendorff_alpha(triples, scale=scale or data.DEFAULT_SCALE) if triples else None
    except ValueError:
        alpha = None
    return {
        "population": "accepted" if apply_exclusions else "all",
        "n_ratings": len(rows),
        "n_annotators": len({(survey_id, annotator_id) for survey_id, annotator_id, _r, _s in rows}),
        "median_kappa": float(median(kappas)) if kappas else None,
        "n_pairs": len(kappas),
        "kappa_weighting": ", ".join(sorted(weightings)) or None,
        "alpha": alpha,
    }


EXCLUDED_LEAD = "excluded annotators with answers here:"


def counted(value, word, plural_word=None):
    value = int(value or 0)
    return f"{value:,} {word if value == 1 else (plural_word or word + 's')}"


def population_text(data, *, name_excluded=True):
    """One sentence naming the population a (pseudonymised) report describes, with its counts.

    `name_excluded=False`: without the excluded annotators and the closing full stop (the page
    writes those itself, linked for the owner)."""
    filters = data.get("filters") or {}
    applied = filters.get("apply_exclusions", True)
    accepted = "accepted " if applied else ""
    pairwise = data.get("pairwise") or {}
    n_judgements = pairwise.get("n_judgements") or 0
    before_judgements = filters.get("n_judgements_before_exclusions")
    before_ratings = filters.get("n_ratings_before_exclusions")
    parts = []
    rated = data.get("n_ratings") or before_ratings
    if rated:
        text = f"{counted(data.get('n_responses'), 'response')}, {counted(data.get('n_ratings'), accepted + 'rating')}"
        if applied and before_ratings is not None:
            text += f" ({before_ratings:,} before exclusions)"
        parts.append(text)
    if pairwise or before_judgements:
        text = counted(n_judgements, f"{accepted}pairwise judgement")
        if applied and before_judgements is not None:
            text += f" ({before_judgements:,} before exclusions)"
        if not rated and pairwise:  # a study of judgements alone: what it ranks
            systems_ranked = counted(len(pairwise.get("systems") or []), "system")
            text += f" over {systems_ranked} and {counted(pairwise.get('n_contexts'), 'context')}"
        parts.append(text)
    conversations = data.get("conversations") or {}
    if conversations and not rated and not pairwise:  # a conversation study: what its section describes
        parts.append(
            f"{counted(conversations.get('n_conversations'), 'conversation')}, "
            f"{counted(conversations.get('n_ratings'), 'whole-conversation rating')}, "
            f"{counted(conversations.get('n_turn_ratings'), 'per-turn rating')}, "
            f"{counted(conversations.get('n_judgements'), 'side-by-side comparison')}"
        )
    bws = data.get("bws") or {}
    if bws:  # best-worst judgements (analysis/sections/bws.py): counted as they are ranked
        text = counted(bws.get("n_judgements"), f"{accepted}best-worst judgement")
        if not rated:
            systems_ranked = counted(len(bws.get("systems") or []), "system")
            text += f" over {systems_ranked} and {counted(bws.get('n_contexts'), 'context')}"
        parts.append(text)
    if filters.get("systems_requested"):
        parts.append(f"systems {', '.join(filters['systems_requested'])} only")
    elif rated:
        parts.append(counted(data.get("n_systems"), "system"))
    sentence = ", ".join(parts) or "no answers"
    surveys = ", ".join(filters.get("surveys") or []) or "–"
    sentence += f"; surveys: {surveys}; aspect {filters.get('aspect', 'overall')}"
    if applied:
        sentence += "; exclusions applied (excluded annotators' answers and rejected assignments left out)"
        excluded = filters.get("excluded_annotators") or []
        if excluded and name_excluded:
            sentence += f"; {EXCLUDED_LEAD} {', '.join(str(w) for w in excluded)}"
    else:
        sentence += "; exclusions ignored: every rating and judgement counts, nobody is excluded"
    if rated and filters.get("weighting"):
        sentence += f"; human score per response: {filters.get('weighting_description') or filters['weighting']}"
        for note in filters.get("weighting_notes") or []:
            sentence += f" ({note})"
    return sentence + "." if name_excluded else sentence


def population_clause(data):
    """Which answers a section's figures are of, in a clause its note can end with: "the accepted
    answers (exclusions applied) of surveys S, aspect A, systems X, Y only"."""
    filters = data.get("filters") or {}
    applied = filters.get("apply_exclusions", True)
    answers = "the accepted answers (exclusions applied)" if applied else "every answer (exclusions ignored)"
    surveys = ", ".join(filters.get("surveys") or []) or "–"
    clause = f"{answers} of surveys {surveys}, aspect {filters.get('aspect', 'overall')}"
    if filters.get("systems_requested"):
        clause += f", systems {', '.join(filters['systems_requested'])} only"
    else:
        clause += ", all systems"
    return clause


def without_annotator_refs(data):
    """`data` without the excluded annotators' database ids (the page's links to the quality page
    need them; a pseudonymised download, meant to be shared, does not)."""
    filters = (data or {}).get("filters")
    if not filters or "excluded_annotator_refs" not in filters:
        return data
    return {**data, "filters": {k: v for k, v in filters.items() if k != "excluded_annotator_refs"}}
