"""The exclusion rules under other settings: which annotators a survey would keep if its
kappa threshold, attention policy, minimum time (or, for a pairwise survey, position-bias and
repeat-consistency rules) were different.

The analysis report's filter-sensitivity audit asks this for a grid of settings. It changes
nothing stored: it re-runs the same two steps as a quality recompute (`judge`, which the
recompute itself calls) on the evidence a cached quality report already holds, so an audit
costs no pairwise kappas. Researcher overrides hold at every setting, as they do in the study.
"""

from dataclasses import dataclass, field, replace

from annotation.kinds.registry import kind_for
from annotation.quality import agreement, rules


@dataclass(frozen=True)
class RuleSettings:
    """The settings the automatic rules read (a survey's, or an audit's variation of them)."""

    kappa_threshold: float | None
    attention_policy: str
    min_seconds_per_item: float | None
    kappa_weighting: str = "none"
    # Pairwise surveys only (rules.py): position bias and swapped-repeat consistency, off as None.
    max_position_bias: float | None = None
    min_position_judgements: int = 0
    min_repeat_consistency: float | None = None
    min_repeats: int = 0
    # Integrity rules (any kind), off as None.
    max_pasted_share: float | None = None
    min_competence: float | None = None

    def varied(self, **changes):
        return replace(self, **changes)


def settings_of(survey):
    # A kind's nominal labels (pairwise: first / tie / second) are never weighted; its own rules
    # (pairwise: position bias, repeats) take the survey's settings.
    kind = kind_for(survey)
    return RuleSettings(
        kappa_threshold=survey.kappa_threshold,
        attention_policy=survey.attention_policy,
        min_seconds_per_item=survey.min_seconds_per_item,
        kappa_weighting="none" if kind.nominal else survey.kappa_weighting,
        max_pasted_share=survey.max_pasted_share,
        min_competence=survey.min_competence,
        **kind.rule_settings(survey),
    )


def outcome_under(item, settings, *, kappa_rule=True):
    """The rules' `Outcome` for one annotator's evidence under `settings` (`RuleSettings`)."""
    return rules.evaluate(
        item,
        kappa_threshold=settings.kappa_threshold if kappa_rule else None,
        min_seconds_per_item=settings.min_seconds_per_item,
        attention_policy=settings.attention_policy,
        max_position_bias=settings.max_position_bias,
        min_position_judgements=settings.min_position_judgements,
        min_repeat_consistency=settings.min_repeat_consistency,
        min_repeats=settings.min_repeats,
        max_pasted_share=settings.max_pasted_share,
        min_competence=settings.min_competence,
    )


def judge(evidence, pairs, settings, cache=None):
    """Judge every annotator: `{key: Outcome}` for `evidence` (`{key: AnnotatorEvidence}`).

    The other rules need no kappa, so they run first and say whose agreement is not evidence;
    each annotator's kappa is then the mean with the consensus (`agreement.consensus_kappas`)
    and is written into their evidence. `cache` (a dict) keeps consensus kappas for an audit that
    judges the same pairs under many settings.
    """
    distrusted = {item.worker for item in evidence.values() if outcome_under(item, settings, kappa_rule=False).excluded}
    key = (settings.kappa_threshold, settings.kappa_weighting, frozenset(distrusted))
    judged = None if cache is None else cache.get(key)
    if judged is None:
        matrix = None
        if cache is not None:
            if ("matrix", settings.kappa_weighting) not in cache:
                cache["matrix", settings.kappa_weighting] = agreement.kappa_matrix(
                    pairs, weighting=settings.kappa_weighting
                )
            matrix = cache["matrix", settings.kappa_weighting]
        judged = agreement.consensus_kappas(
            pairs, threshold=settings.kappa_threshold, weighting=settings.kappa_weighting, distrusted=distrusted,
            matrix=matrix,
        )  # fmt: skip
        if cache is not None:
            cache[key] = judged
    for item in evidence.values():
        item.kappa, item.kappa_pairs = judged.get(item.worker, (None, 0))
    return {key: outcome_under(item, settings) for key, item in evidence.items()}


@dataclass
class StoredEvidence:
    """What a cached survey quality report says about its annotators, ready to be judged again."""

    evidence: dict  # annotator id -> AnnotatorEvidence
    pairs: list  # PairAgreement
    overrides: dict  # annotator id -> excluded, for researcher (manual) decisions that hold
    consensus: dict = field(default_factory=dict)  # judge's cache across settings


def stored_evidence(content):
    """Rebuild the rules' evidence from a survey quality report (`survey_quality`'s dict)."""
    evidence, overrides = {}, {}
    for entry in content.get("annotators", []):
        attention = entry.get("attention") or {}
        position = entry.get("position") or {}
        repeats = entry.get("repeats") or {}
        integrity = entry.get("integrity") or {}
        evidence[entry["annotator_id"]] = rules.AnnotatorEvidence(
            worker=entry["worker"],
            attention_total=attention.get("total", 0),
            attention_failed=attention.get("failed", 0),
            median_seconds=entry.get("median_seconds"),
            left_choices=position.get("left", 0),
            decisive=position.get("decisive", 0),
            repeats_consistent=repeats.get("consistent", 0),
            repeats_total=repeats.get("total", 0),
            pasted_replies=integrity.get("pasted_replies", 0),
            telemetry_replies=integrity.get("telemetry_replies", 0),
            competence=integrity.get("competence"),
            competence_model=integrity.get("competence_model"),
        )
        if entry.get("source") == "manual":
            overrides[entry["annotator_id"]] = bool(entry.get("excluded"))
    pairs = [agreement.PairAgreement(**pair) for pair in content.get("pairs", [])]
    return StoredEvidence(evidence=evidence, pairs=pairs, overrides=overrides)


def excluded_under(stored, settings):
    """The annotator ids the survey would exclude under `settings` (overrides included)."""
    outcomes = judge(stored.evidence, stored.pairs, settings, cache=stored.consensus)
    return {key for key, outcome in outcomes.items() if stored.overrides.get(key, outcome.excluded)}
