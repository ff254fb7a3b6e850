"""Build, cache and refresh correlation reports: the registered sections assembled into `Report.data`."""

import time

import numpy as np
from django.conf import settings
from django.utils import timezone

from analysis.models import Report
from analysis.report.inputs import report_inputs
from analysis.report.options import resolved
from analysis.report.population import population_counts
from analysis.report.report_keys import params_hash
from analysis.sections import human_ceiling
from analysis.sections.base import ReportContext
from analysis.sections.registry import SECTIONS
from analysis.services.freshness import fingerprint_of, report_change_marker, report_fingerprint, report_input_parts
from annotation.quality.weighting import WEIGHTINGS

SEED = 0


def _bootstrap_samples():
    return int(getattr(settings, "ANALYSIS_BOOTSTRAP_SAMPLES", 1000))


def _permutations():
    return int(getattr(settings, "ANALYSIS_PERMUTATIONS", 1000))


def _surveys(dataset, survey):
    return [survey] if survey is not None else list(dataset.surveys.order_by("pk"))


def _compute(
    *, dataset, survey, aspect, systems, apply_exclusions, learned_metric, n_boot, with_vectors=True, options=None
):
    surveys = [survey] if survey is not None else None
    weighting = resolved(options)["weighting"]
    inputs = report_inputs(
        dataset=dataset, surveys=surveys, aspect=aspect, systems=systems, apply_exclusions=apply_exclusions,
        weighting=weighting,
    )
    context = ReportContext(
        dataset=dataset,
        survey=survey,
        aspect=aspect,
        systems=systems,
        apply_exclusions=apply_exclusions,
        learned_metric=learned_metric,
        options=resolved(options),
        inputs=inputs,
        n_boot=n_boot,
        # Permutations are switched off with the bootstrap (n_boot=0: quick reports in tests).
        n_perm=_permutations() if n_boot else 0,
        seed=SEED,
        sections=SECTIONS,
    )
    # Counted within the same filters as every figure (F01): the systems filter, and no excluded
    # annotator when exclusions are ignored.
    population = population_counts(
        dataset=dataset, surveys=surveys, aspect=aspect, systems=systems, apply_exclusions=apply_exclusions
    )
    data = {
        "dataset": dataset.name,
        "survey": survey.name if survey is not None else None,
        "n_responses": int(inputs.human.size),
        "n_ratings": int(inputs.counts.sum()),
        "n_systems": len(set(inputs.systems.tolist())),
        "metrics": list(inputs.metrics),
        "options": context.options,
    }
    for section in SECTIONS:
        data.update(context.part(section.name))
    data["filters"] = {
        "surveys": [s.name for s in _surveys(dataset, survey)],
        "aspect": aspect,
        "systems": sorted(set(inputs.systems.tolist())),
        "systems_requested": sorted(systems) if systems else None,
        "apply_exclusions": apply_exclusions,
        # excluded_annotators (+ _refs), n_ratings_before_exclusions, n_judgements_before_exclusions
        **population,
        # Issue 40: how each response's ratings became its human score, in words, and what it could not do.
        "weighting": weighting,
        "weighting_description": WEIGHTINGS[weighting],
        "weighting_notes": inputs.weighting_notes
        + ([] if weighting == "plain" else [
            "the human split-half ceiling and the agreement figures stay on the raw ratings"
        ]),
        "exclusion_policy": (
            "ratings of excluded annotators and rejected assignments left out (quality control)"
            if apply_exclusions
            else "every rating used, exclusions ignored"
        ),
    }
    data["method"] = {
        "bootstrap_samples": n_boot,
        "confidence": 0.95,
        "seed": SEED,
        "ci": "utterance level: percentile bootstrap over responses; system level: Boot-Both (systems and "
        "contexts resampled together, Deutsch et al. 2021), p_bootboth from the same resamples",
        "williams": "Williams (1959) t on Pearson r, one-sided p that 'a' beats 'b', df = n - 3",
        "length_bias_tests": "Welch's t-test and Mann-Whitney U, two-sided",
        "delta_words": "|words(response) - words(first reference)|, words = \\w+ runs",
    }
    if not with_vectors:
        return data, None
    halves = human_ceiling.halves(context)
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
    *, dataset, survey=None, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None, n_boot=None,
    options=None,
):  # fmt: skip
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
        options=options,
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
