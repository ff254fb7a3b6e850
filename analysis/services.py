"""Build, cache and refresh correlation reports."""

import hashlib
import json
import time

import numpy as np
from django.conf import settings
from django.db.models import Count, Max, Sum
from django.utils import timezone

from analysis import stats
from analysis.inputs import report_inputs, stopword_pairs
from analysis.judges import judges_section
from analysis.learned import trained_here_section
from analysis.models import Report
from analysis.pairwise_section import pairwise_section
from analysis.pairwise_sensitivity import pairwise_sensitivity_section
from analysis.population import population_agreement, population_counts
from analysis.report_keys import params_hash, report_params  # noqa: F401 (callers import them from here too)
from analysis.sections.metaeval import clusters_section, pairwise_accuracy_section, response_contexts
from analysis.sections.planning import planning_section
from analysis.sensitivity import sensitivity_section
from annotation.kinds.pairwise.selectors import accepted_judgements
from annotation.models import Assignment, Context, ExclusionDecision, PairwiseJudgement, Rating, Response, Survey
from annotation.quality.agreement import split_half_agreement, split_halves
from annotation.quality.selectors import accepted_ratings, agreement_summary
from scoring.judges import prompts
from scoring.models import JudgeCacheEntry, MetricScore
from scoring.services.signatures import dataset_signatures

OVERLAP_METRICS = ("bleu2", "rouge_l")
LEARNED_PREFIX = "adem:"
N_EXAMPLES = 5
SEED = 0


def _bootstrap_samples():
    return int(getattr(settings, "ANALYSIS_BOOTSTRAP_SAMPLES", 1000))


def _permutations():
    return int(getattr(settings, "ANALYSIS_PERMUTATIONS", 1000))


def _surveys(dataset, survey):
    return [survey] if survey is not None else list(dataset.surveys.order_by("pk"))


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def report_input_parts(*, dataset, survey=None, aspect="overall", apply_exclusions=True, **_ignored):
    """Short hashes of what a report depends on, one per kind of input, for people to compare:
    `ratings` (count, newest id), `accepted` (the accepted set: count and id sum, so it changes
    whenever an exclusion decision does), `scores` (count, newest computation, sum of values) and
    `pairwise` (judgements, their exclusion decisions, pairwise LLM judges' answers; see
    `_pairwise_marker`). Cheap aggregate queries, so pages and exports can check staleness.
    """
    survey_ids = [survey.pk] if survey is not None else list(dataset.surveys.values_list("pk", flat=True))
    surveys = [survey] if survey is not None else None
    # Filters on ids rather than joins, so SQLite and PostgreSQL answer from the indexes
    # (rating: survey+aspect; metric score: response+metric) instead of scanning joins.
    ratings = Rating.objects.filter(survey_id__in=survey_ids, aspect=aspect)
    # Both bring their surveys' stale quality reports up to date first, so the exclusion decisions
    # read below are the ones the report itself will use.
    accepted = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    accepted_pairs = accepted_judgements(
        dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions
    )
    responses = Response.objects.filter(context__dataset=dataset).values("pk")
    scores = MetricScore.objects.filter(response_id__in=responses)
    parts = {
        "ratings": ratings.aggregate(n=Count("pk"), last=Max("pk")),
        "accepted": accepted.aggregate(n=Count("pk"), ids=Sum("pk")),
        # The sum of values too: a queryset .update() of values leaves computed_at (auto_now) alone.
        "scores": scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
        "pairwise": _pairwise_marker(dataset, survey_ids),
    }
    if parts["pairwise"] is not None:
        # the accepted judgements, as for ratings: a platform's confirmation changes them too
        parts["pairwise_accepted"] = accepted_pairs.aggregate(n=Count("pk"), ids=Sum("pk"))
    return {name: _digest(value)[:8] for name, value in parts.items()}


def _pairwise_marker(dataset, survey_ids):
    """What the pairwise section reads beside ratings and scores: the judgements (only ever
    added), their surveys' exclusion decisions (an override adds one), and the answers of the
    owner's pairwise LLM judges. Those answers live in the judge cache, not in metric scores, so
    judging pairs makes the report stale here, as computing a metric does through `scores`.
    The cache is the owner's, not the dataset's (it is keyed by prompt): judging another
    dataset's pairs also reads as a change, which costs one recompute, never a stale figure.
    """
    judgements = PairwiseJudgement.objects.filter(survey_id__in=survey_ids).aggregate(n=Count("pk"), last=Max("pk"))
    if not judgements["n"]:
        return None  # a rating study: nothing here can change its report
    pairwise_surveys = Survey.objects.filter(pk__in=survey_ids, task_type=Survey.TaskType.PAIRWISE)
    decisions = ExclusionDecision.objects.filter(survey__in=pairwise_surveys)
    verdicts = JudgeCacheEntry.objects.filter(judge__owner_id=dataset.owner_id, judge__template=prompts.PAIRWISE)
    return {
        "judgements": judgements,
        "decisions": decisions.aggregate(n=Count("pk"), last=Max("pk")),
        "judge_answers": verdicts.aggregate(n=Count("pk"), last=Max("pk")),
    }


def report_change_marker(*, dataset, survey=None, aspect="overall", **_ignored):
    """A cheaper stand-in for the fingerprint that a page can afford on every view: the newest
    rating, exclusion decision (an override adds one) and rejected assignment, the metric
    scores' count, newest and sum, and the pairwise inputs (`_pairwise_marker`). It changes
    whenever the fingerprint does in practice, without reading the quality report that
    `accepted_ratings` needs (MTurk confirmations, which also change the accepted set, are left
    to the periodic fingerprint check)."""
    survey_ids = [survey.pk] if survey is not None else list(dataset.surveys.values_list("pk", flat=True))
    responses = Response.objects.filter(context__dataset=dataset).values("pk")
    ratings = Rating.objects.filter(survey_id__in=survey_ids, aspect=aspect)
    decisions = ExclusionDecision.objects.filter(survey_id__in=survey_ids)
    rejected = Assignment.objects.filter(hit__survey_id__in=survey_ids, status=Assignment.Status.REJECTED)
    scores = MetricScore.objects.filter(response_id__in=responses)
    marker = {
        "ratings": ratings.aggregate(n=Count("pk"), last=Max("pk")),
        "decisions": decisions.aggregate(n=Count("pk"), last=Max("pk")),
        "rejected": rejected.aggregate(n=Count("pk"), ids=Sum("pk")),
        "scores": scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
        "pairwise": _pairwise_marker(dataset, survey_ids),
    }
    return _digest(marker)[:16]


def fingerprint_of(parts):
    return _digest(parts)


def report_fingerprint(**inputs):
    """One hash of every input (see `report_input_parts`); a different one means a stale report."""
    return fingerprint_of(report_input_parts(**inputs))


def _ceiling(split):
    """The human split-half row, flattened for the tables (quality control's figure, filtered as the report)."""
    return {
        "pearson": split["pearson"]["mean"],
        "pearson_sd": split["pearson"]["std"],
        "spearman": split["spearman"]["mean"],
        "spearman_sd": split["spearman"]["std"],
        "n_splits": split["n_splits"],
        "n_items_mean": split["n_responses"],
        "mode": split["mode"],
    }


def _examples(inputs, indices, normalised, human):
    out = []
    contexts = Context.objects.in_bulk([inputs.contexts[int(inputs.response_ids[i])] for i in indices])
    for i in indices:
        response_id = int(inputs.response_ids[i])
        context = contexts.get(inputs.contexts[response_id])
        out.append(
            {
                "response_id": response_id,
                "system": str(inputs.systems[i]),
                "context": [turn.get("text", "") for turn in (context.turns if context else [])][-3:],
                "response": inputs.texts[response_id],
                "reference": inputs.references.get(inputs.contexts[response_id], ""),
                "human": float(human[i]),
                "normalised": {name: _round(values[i]) for name, values in normalised.items()},
            }
        )
    return out


def _jsonable(value):
    """Plain JSON values: numpy scalars to Python, NaN/inf to None (PostgreSQL's jsonb rejects NaN).

    Applied to sections other modules produce (the agreement summary), whose types we do not control.
    """
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _json_list(values):
    return [None if not np.isfinite(v) else float(v) for v in values]


def _round(value):
    value = float(value)
    return None if not np.isfinite(value) else round(value, 3)


def _failure_analysis(inputs, learned_metric):
    learned = learned_metric or next((m for m in inputs.metrics if m.startswith(LEARNED_PREFIX)), None)
    chosen = {name: inputs.metrics[name] for name in (*OVERLAP_METRICS, learned) if name in inputs.metrics}
    result = stats.failure_analysis(
        inputs.human, chosen, overlap=OVERLAP_METRICS, learned=learned, n_examples=N_EXAMPLES, seed=SEED
    )
    normalised = {name: stats.normalise_to_human(values, inputs.human) for name, values in chosen.items()}
    for case in result["cases"]:
        case["examples"] = _examples(inputs, case["examples"], normalised, inputs.human)
        if "rescued_examples" in case:
            case["rescued_examples"] = _examples(inputs, case["rescued_examples"], normalised, inputs.human)
    result["overlap_metrics"] = [name for name in OVERLAP_METRICS if name in inputs.metrics]
    return result


def _split_half(dataset, surveys, aspect, apply_exclusions, response_ids):
    """Quality control's split-half agreement over exactly the ratings this report uses.

    Returns the summary and the first split's two mean vectors (for the human-vs-human scatter).
    """
    ratings = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    wanted = set(response_ids.tolist())
    rows = [row for row in ratings.values_list("annotator_id", "response_id", "score") if row[1] in wanted]
    summary = split_half_agreement(rows, seed=SEED)
    first = next(split_halves(rows, n_splits=1, seed=SEED, mode=summary["mode"]), None)
    return summary, first, rows


def _n_available(dataset, survey, systems):
    """Responses the study could still have rated: the dataset's (the survey's systems, the filter's)."""
    responses = Response.objects.filter(context__dataset=dataset)
    if survey is not None and survey.systems.exists():
        responses = responses.filter(system__in=survey.systems.all())
    if systems:
        responses = responses.filter(system__name__in=list(systems))
    return responses.count()


def _compute(*, dataset, survey, aspect, systems, apply_exclusions, learned_metric, n_boot, with_vectors=True):
    surveys = [survey] if survey is not None else None
    inputs = report_inputs(
        dataset=dataset, surveys=surveys, aspect=aspect, systems=systems, apply_exclusions=apply_exclusions
    )
    agreement = _jsonable(
        agreement_summary(survey=survey) if survey is not None else agreement_summary(dataset=dataset)
    )
    own_split, halves, rating_rows = _split_half(dataset, surveys, aspect, apply_exclusions, inputs.response_ids)
    n_ratings = int(inputs.counts.sum())
    # Counted within the same filters as every figure (F01): the systems filter, and no excluded
    # annotator when exclusions are ignored.
    population = population_counts(
        dataset=dataset, surveys=surveys, aspect=aspect, systems=systems, apply_exclusions=apply_exclusions
    )
    system_level = stats.system_level(
        inputs.human, inputs.metrics, inputs.systems, contexts=response_contexts(inputs), n_boot=n_boot, seed=SEED
    )
    utterance_level = stats.utterance_level(inputs.human, inputs.metrics, n_boot=n_boot, seed=SEED)
    williams = stats.pairwise_williams(inputs.human, inputs.metrics)
    # Permutations are switched off with the bootstrap (n_boot=0: quick reports in tests).
    trained_here = trained_here_section(dataset=dataset, metrics=list(inputs.metrics))
    clusters = clusters_section(inputs, utterance_level, n_perm=_permutations() if n_boot else 0, seed=SEED)
    data = {
        "dataset": dataset.name,
        "survey": survey.name if survey is not None else None,
        "n_responses": int(inputs.human.size),
        "n_ratings": n_ratings,
        "n_systems": len(set(inputs.systems.tolist())),
        "metrics": list(inputs.metrics),
        "utterance_level": utterance_level,
        "human_ceiling": _ceiling(own_split),
        "system_level": system_level["correlations"],
        "systems": system_level["systems"],
        "williams": williams,
        "clusters": clusters.pop("clusters"),
        "significance": clusters,
        "pairwise_accuracy": pairwise_accuracy_section(inputs, system_level["systems"]),
        "planning": planning_section(
            rating_rows,
            utterance_level,
            williams,
            n_available=_n_available(dataset, survey, systems),
            trained_here=[row["metric"] for row in trained_here],
        ),
        "agreement": agreement,
        "population_agreement": population_agreement(
            dataset=dataset,
            surveys=surveys,
            aspect=aspect,
            apply_exclusions=apply_exclusions,
            response_ids=inputs.response_ids.tolist(),
        ),
        "length_bias": stats.length_bias(inputs.delta_words, inputs.human, inputs.metrics),
        "stopwords": stats.stopword_table(inputs.human, inputs.metrics, stopword_pairs(inputs.metrics)),
        "failure_analysis": _failure_analysis(inputs, learned_metric),
        "judges": judges_section(
            inputs=inputs, dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions
        ),
        "signatures": dataset_signatures(dataset=dataset, metrics=list(inputs.metrics)),
        "trained_on_these_ratings": trained_here,
        "sensitivity": sensitivity_section(dataset=dataset, surveys=surveys, aspect=aspect, inputs=inputs),
        "filters": {
            "surveys": [s.name for s in _surveys(dataset, survey)],
            "aspect": aspect,
            "systems": sorted(set(inputs.systems.tolist())),
            "systems_requested": sorted(systems) if systems else None,
            "apply_exclusions": apply_exclusions,
            # excluded_annotators (+ _refs), n_ratings_before_exclusions, n_judgements_before_exclusions
            **population,
            "exclusion_policy": (
                "ratings of excluded annotators and rejected assignments left out (quality control)"
                if apply_exclusions
                else "every rating used, exclusions ignored"
            ),
        },
        "method": {
            "bootstrap_samples": n_boot,
            "confidence": 0.95,
            "seed": SEED,
            "ci": "utterance level: percentile bootstrap over responses; system level: Boot-Both (systems and "
            "contexts resampled together, Deutsch et al. 2021), p_bootboth from the same resamples",
            "williams": "Williams (1959) t on Pearson r, one-sided p that 'a' beats 'b', df = n - 3",
            "length_bias_tests": "Welch's t-test and Mann-Whitney U, two-sided",
            "delta_words": "|words(response) - words(first reference)|, words = \\w+ runs",
        },
    }
    data["pairwise"] = pairwise_section(
        dataset=dataset,
        surveys=surveys,
        aspect=aspect,
        apply_exclusions=apply_exclusions,
        n_boot=n_boot,
        seed=SEED,
        systems=systems,
    )
    # Also when the study's own settings leave no judgement (no pairwise section): that is where
    # seeing what another filter would keep helps most.
    data["pairwise_sensitivity"] = pairwise_sensitivity_section(
        dataset=dataset, surveys=surveys, aspect=aspect, systems=systems
    )
    if not with_vectors:
        return data, None
    vectors = {
        "response_ids": inputs.response_ids.tolist(),
        "human": inputs.human.tolist(),
        "systems": inputs.systems.tolist(),
        "metrics": {
            name: [None if not np.isfinite(v) else float(v) for v in values] for name, values in inputs.metrics.items()
        },
        "halves": None if halves is None else [halves[0].tolist(), halves[1].tolist()],
    }
    return data, vectors


def report_build(
    *, dataset, survey=None, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None, n_boot=None
):
    """The full report as a JSON-serialisable dict (computed now; see `report_refresh` to cache)."""
    data, _ = _compute(
        dataset=dataset,
        survey=survey,
        aspect=aspect,
        systems=systems,
        apply_exclusions=apply_exclusions,
        learned_metric=learned_metric,
        n_boot=_bootstrap_samples() if n_boot is None else n_boot,
        with_vectors=False,
    )
    return data


def report_get_or_create(*, dataset, survey=None, params):
    digest = params_hash(params)
    report = Report.objects.defer("vectors").filter(dataset=dataset, survey=survey, params_hash=digest).first()
    if report is None:
        report, _ = Report.objects.get_or_create(
            dataset=dataset, survey=survey, params_hash=digest, defaults={"params": params}
        )
    return report


def report_refresh(*, report):
    """Recompute a cached report now (called by the Celery task)."""
    params = report.params
    parts = report_input_parts(dataset=report.dataset, survey=report.survey, **params)
    started = time.perf_counter()
    try:
        data, vectors = _compute(dataset=report.dataset, survey=report.survey, n_boot=_bootstrap_samples(), **params)
    except Exception as error:
        Report.objects.filter(pk=report.pk).update(status=Report.Status.FAILED, error=str(error)[:2000])
        raise
    data["computed_at"] = timezone.now().isoformat()
    data["inputs"] = parts
    data["inputs_marker"] = report_change_marker(dataset=report.dataset, survey=report.survey, **params)
    now = timezone.now()
    Report.objects.filter(pk=report.pk).update(
        status=Report.Status.READY,
        data=data,
        vectors=vectors,
        fingerprint=fingerprint_of(parts),
        error="",
        computed_at=now,
        checked_at=now,
        seconds=time.perf_counter() - started,
    )
    report.refresh_from_db()
    return report


def report_check(*, report):
    """Recompute the report if its inputs changed since it was computed. Returns True if it did."""
    Report.objects.filter(pk=report.pk).update(checked_at=timezone.now())
    current = report_fingerprint(dataset=report.dataset, survey=report.survey, **report.params)
    if report.data is not None and current == report.fingerprint:
        return False
    report_refresh(report=report)
    return True
