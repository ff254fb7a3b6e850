"""What a survey's layout costs before it runs: HITs, assignments, answers, annotator time, reward.

The survey form shows it as the researcher types (`survey_estimate`), a survey's page and its
platforms' pages for the survey as saved (`survey_estimate_for`). What one HIT holds and how long
it takes is the survey's kind's (`TaskKind.estimate`).
"""

import inspect
import math

from annotation.kinds.registry import DEFAULT_KIND, kind_named
from annotation.models import System


def survey_selected_systems(*, survey):
    systems = survey.systems.all()
    return systems if systems.exists() else System.objects.filter(dataset=survey.dataset)


def survey_estimate(
    *,
    n_contexts,
    n_systems,
    task_type=DEFAULT_KIND,
    contexts_per_hit=5,
    assignments_per_hit=3,
    attention_checks_per_hit=1,
    overlap_contexts=0,
    n_aspects=1,
    reward_cents=50,
    pair_budget=0,
    reference_pairs="none",
    assignment_minutes=None,
    n_gold_checks=0,
    max_hits_per_annotator=10,
    tuple_size=4,
    **_ignored,
):
    """What a layout costs: HITs, assignments, ratings (a pairwise survey's judgements, a write
    survey's written replies), annotator time and the total reward; `over_time` when a HIT takes
    longer than the `assignment_minutes` an annotator holds it (it would expire unfinished)."""
    overlap = min(overlap_contexts, n_contexts)
    regular = max(n_contexts - overlap, 0)
    hits = math.ceil(regular / contexts_per_hit) if regular else (1 if overlap else 0)
    assignments = hits * assignments_per_hit
    # Every HIT carries the overlap contexts beside its own (hits_generate), so the first HIT an
    # annotator takes has them all: count them, or the estimate undercounts that HIT's items.
    contexts_in_first_hit = min(contexts_per_hit, regular) + overlap
    kind = kind_named(task_type)
    items_per_hit, seconds_per_hit, ratings = kind.estimate(
        n_contexts=n_contexts,
        n_systems=n_systems,
        contexts_in_first_hit=contexts_in_first_hit,
        regular=regular,
        overlap=overlap,
        settings={
            "contexts_per_hit": contexts_per_hit,
            "assignments_per_hit": assignments_per_hit,
            "attention_checks_per_hit": attention_checks_per_hit,
            "n_aspects": n_aspects,
            "pair_budget": pair_budget,
            "reference_pairs": reference_pairs,
            "tuple_size": tuple_size,
            # the kind's other settings, as given (e.g. how a kind lays its items out)
            **{name: _ignored[name] for name in kind.own_settings if name in _ignored},
        },
    )
    return {
        "hits": hits,
        "assignments": assignments,
        "items_per_hit": items_per_hit,
        "overlap": overlap,
        "ratings": ratings,
        "answers": kind.wording["answers"],  # what `ratings` counts, in the type's words
        "minutes_per_hit": round(seconds_per_hit / 60, 1),
        "assignment_minutes": assignment_minutes,
        "over_time": assignment_minutes is not None and seconds_per_hit > assignment_minutes * 60,
        "annotator_hours": round(assignments * seconds_per_hit / 3600, 1),
        "cost_cents": assignments * reward_cents,
        "cost_dollars": f"{assignments * reward_cents / 100:.2f}",
        "gold_short": kind.gold_shortfall(
            n_gold=n_gold_checks,
            checks_per_hit=attention_checks_per_hit,
            hits=hits,
            max_hits_per_annotator=max_hits_per_annotator,
        ),
    }


def survey_estimate_for(*, survey):
    return survey_estimate(
        n_contexts=survey.dataset.contexts.count(),
        n_systems=survey_selected_systems(survey=survey).count(),
        task_type=survey.task_type,
        contexts_per_hit=survey.contexts_per_hit,
        assignments_per_hit=survey.assignments_per_hit,
        attention_checks_per_hit=survey.attention_checks_per_hit,
        overlap_contexts=survey.overlap_contexts,
        n_aspects=survey.aspects.count(),
        reward_cents=survey.reward_cents,
        pair_budget=survey.pair_budget,
        reference_pairs=survey.reference_pairs,
        assignment_minutes=survey.assignment_minutes,
        n_gold_checks=survey.attention_checks.count(),
        max_hits_per_annotator=survey.max_hits_per_annotator,
        tuple_size=survey.tuple_size,
        **{
            name: getattr(survey, name)
            for name in kind_named(survey.task_type).own_settings
            if name not in inspect.signature(survey_estimate).parameters  # those are passed above
        },
    )
