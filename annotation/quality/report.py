"""Assemble quality reports (plain dicts, ready for JSON) from the database and the pure statistics.

Reads only; the services write decisions and cache the result.
"""

from statistics import median

from django.utils import timezone

from annotation.kinds.registry import kind_for
from annotation.quality import agreement, data, rules, whatif
from annotation.quality.integrity_report import rule_competence

SPLIT_HALF_SPLITS = 100
SPLIT_HALF_SEED = 0


def _triples(rows, labels):
    return [(labels[r["annotator_id"]], r["response_id"], r["score"]) for r in rows]


def _strata(rows, labels, strata):
    """`{question: (triples, scale)}` of rows that carry their `aspect`, each question on its scale."""
    grouped = {aspect: ([], scale) for aspect, scale in strata.items()}
    for row in rows:
        grouped[row["aspect"]][0].append((labels[row["annotator_id"]], row["response_id"], row["score"]))
    return {aspect: group for aspect, group in grouped.items() if group[0]}


def aspect_agreement(rows, labels, strata, *, accepted, weighting, min_overlap):
    """Per question of a kind whose rules judge several (`quality_strata`): items, ratings, the
    median pairwise kappa (the survey's weighting) over all annotators and over the `accepted`
    ones (labels), Krippendorff's alpha (ordinal; nominal for two values) over the accepted
    annotators' ratings, and split-half over theirs."""
    out = []
    for aspect, (triples, scale) in _strata(rows, labels, strata).items():
        pairs = agreement.pairwise_agreement(triples, scale=scale, min_overlap=min_overlap)
        kept = [t for t in triples if t[0] in accepted]
        level = "nominal" if len(scale) == 2 else "ordinal"
        out.append({
            "aspect": aspect, "scale": scale, "n_items": len({t[1] for t in triples}), "n_ratings": len(triples),
            "median_kappa": agreement.median_kappa(pairs, weighting=weighting),
            "median_kappa_accepted": agreement.median_kappa(pairs, weighting=weighting, annotators=accepted),
            "n_pairs": sum(p.used for p in pairs),
            "alpha": agreement.krippendorff_alpha(kept, scale=scale, level=level),
            "split_half": agreement.split_half_agreement(kept, n_splits=SPLIT_HALF_SPLITS, seed=SPLIT_HALF_SEED)[
                "pearson"]["mean"],
        })  # fmt: skip
    return out


def _median_seconds(rows):
    seconds = [r["seconds"] for r in rows if r["seconds"] is not None]
    return float(median(seconds)) if seconds else None


def _rows(survey):
    """What the rules judge, as the survey's kind reads it: ratings on the overall question, or for
    a pairwise survey its judgements on every question, read as ratings of oriented (pair, question)
    items on the labels first / tie / second."""
    return kind_for(survey).quality_rows(survey)


def integrity_numbers(integrity):
    """`{annotator_id: {"pasted_replies", "telemetry_replies", "competence", "competence_model"}}`: what
    the integrity rules judge, from the report's integrity section (`integrity_report.survey_integrity`):
    the ordinal spammer model's competence on a rating scale, MACE's otherwise, and which it is."""
    numbers = {}
    for worker in (integrity or {}).get("workers", []):
        pasted = worker["reply_flags"].get("mostly_pasted", {"raised": 0, "of": 0})
        competence, model = rule_competence(worker.get("competence"))
        numbers[worker["annotator_id"]] = {
            "pasted_replies": pasted["raised"],
            "telemetry_replies": pasted["of"],
            "competence": competence,
            "competence_model": model,
        }
    return numbers


def survey_evidence(survey, rows, labels, attention, pair_counts=None, *, integrity=None):
    """Pairwise agreement and the rules' evidence per annotator, from all non-rejected ratings.

    `pair_counts`, for a kind with rules of its own (pairwise): `(position counts, repeat counts)`,
    the evidence of its position-bias and consistency rules (`TaskKind.pair_counts`).

    When raters are anonymous per item (each rater id rates one item, as in GRADE) no pair
    shares enough items to mean anything, so no pairs are computed. The kappa the rule judges is
    the mean with the agreeing annotators (`agreement.consensus_kappas`), leaving out partners
    that the attention or speed rule already excludes; `means` keeps the plain mean for display.
    """
    kind = kind_for(survey)
    scale = kind.quality_scale(survey)
    strata = kind.quality_strata(survey)
    triples = _triples(rows, labels)
    pairs = []
    if agreement.split_half_mode(triples) == agreement.SPLIT_ANNOTATORS:
        if strata:  # each question on its own scale, a pair judged by its mean kappa over them
            pairs, _ = agreement.stratified_agreement(
                _strata(rows, labels, strata), min_overlap=survey.min_pair_overlap
            )
        else:
            pairs = agreement.pairwise_agreement(triples, scale=scale, min_overlap=survey.min_pair_overlap)
    means = agreement.annotator_kappas(pairs, weighting=survey.kappa_weighting)
    by_annotator = {}
    for row in rows:
        by_annotator.setdefault(row["annotator_id"], []).append(row)
    positions, repeats = pair_counts or ({}, {})
    numbers = integrity_numbers(integrity)
    evidence = {}
    for annotator_id in set(by_annotator) | set(attention) | set(repeats) | set(numbers):
        total, failed = attention.get(annotator_id, (0, 0))
        left, decisive = positions.get(annotator_id, (0, 0))
        consistent, repeated = repeats.get(annotator_id, (0, 0))
        evidence[annotator_id] = rules.AnnotatorEvidence(
            worker=labels[annotator_id],
            attention_total=total,
            attention_failed=failed,
            median_seconds=_median_seconds(by_annotator.get(annotator_id, [])),
            left_choices=left,
            decisive=decisive,
            repeats_consistent=consistent,
            repeats_total=repeated,
            **numbers.get(annotator_id, {}),
        )
    whatif.judge(evidence, pairs, whatif.settings_of(survey))  # sets each annotator's judged kappa
    return scale, pairs, means, evidence, by_annotator


def auto_outcomes(survey, evidence):
    settings = whatif.settings_of(survey)
    return {annotator_id: whatif.outcome_under(item, settings) for annotator_id, item in evidence.items()}


def _time_summary(rows):
    seconds = sorted(r["seconds"] for r in rows if r["seconds"] is not None)
    if not seconds:
        return {"n": 0, "median": None, "p10": None, "p90": None}

    def quantile(q):
        return float(seconds[min(len(seconds) - 1, int(q * len(seconds)))])

    return {"n": len(seconds), "median": float(median(seconds)), "p10": quantile(0.1), "p90": quantile(0.9)}


def _annotator_entry(annotator_id, label, *, means, evidence, outcome, decision, rows, rejected):
    item = evidence[annotator_id]
    kappa, n_pairs = means.get(label, (None, 0))
    excluded = bool(decision and decision["excluded"])
    source = decision["source"] if decision else None
    if source == "manual":
        reasons = [{"rule": "manual", "detail": decision["note"]}] if excluded else []
    else:
        reasons = outcome.reasons if excluded else []
    return {
        "worker": label,
        "annotator_id": annotator_id,
        "kappa": kappa,
        "n_pairs": n_pairs,
        "kappa_judged": item.kappa,
        "n_judged_pairs": item.kappa_pairs,
        "n_ratings": len(rows),
        "excluded": excluded,
        "reasons": reasons,
        "flags": outcome.flags,
        "auto_excluded": outcome.excluded,
        "auto_reasons": outcome.reasons,
        "source": source,
        "decided_by": decision["decided_by"] if decision else None,
        "note": decision["note"] if decision else "",
        "decided_at": decision["created_at"] if decision else None,
        "attention": {"total": item.attention_total, "failed": item.attention_failed},
        # Pairwise only (zero otherwise): what the position-bias and consistency rules judged.
        "position": {"left": item.left_choices, "decisive": item.decisive},
        "repeats": {"consistent": item.repeats_consistent, "total": item.repeats_total},
        # What the integrity rules judged (issue 40): flags and competence, from the integrity section.
        "integrity": {
            "pasted_replies": item.pasted_replies,
            "telemetry_replies": item.telemetry_replies,
            "competence": item.competence,
            "competence_model": item.competence_model,
        },
        "median_seconds": item.median_seconds,
        "rejected_assignments": rejected.get(annotator_id, 0),
    }


def survey_report(survey, *, record=None, integrity=None):
    """The full quality report of one survey, using the decisions stored now.

    `record`, if given, is called with the rules' automatic outcomes `{annotator_id: Outcome}`
    before the stored decisions are read, so a recompute writes and reports in one pass.
    `integrity`: the survey's integrity section, whose flags and competence the integrity rules judge.
    """
    # Ratings and attention answers are read once each: work submitted meanwhile waits for the
    # next recompute rather than half-appearing in this one.
    rows = _rows(survey)
    attention = data.attention_by_annotator(survey)
    kind = kind_for(survey)
    pair_counts = kind.pair_counts(survey)
    repeaters = set(pair_counts[1]) if pair_counts else set()
    writers = set(integrity_numbers(integrity))
    labels = data.annotator_labels({r["annotator_id"] for r in rows} | set(attention) | repeaters | writers)
    scale, pairs, means, evidence, by_annotator = survey_evidence(
        survey, rows, labels, attention, pair_counts, integrity=integrity
    )
    outcomes = auto_outcomes(survey, evidence)
    if record is not None:
        record(outcomes)
    decisions = data.effective_decisions(surveys=[survey])
    rejected = data.rejected_assignments_by_annotator(survey)
    annotators = [
        _annotator_entry(
            annotator_id,
            labels[annotator_id],
            means=means,
            evidence=evidence,
            outcome=outcomes[annotator_id],
            decision=decisions.get((survey.pk, annotator_id)),
            rows=by_annotator.get(annotator_id, []),
            rejected=rejected,
        )
        for annotator_id in sorted(evidence, key=lambda pk: labels[pk])
    ]
    excluded = {entry["annotator_id"] for entry in annotators if entry["excluded"]}
    accepted_rows = [r for r in rows if r["annotator_id"] not in excluded]
    accepted_labels = {entry["worker"] for entry in annotators if not entry["excluded"]}
    weighting = whatif.settings_of(survey).kappa_weighting
    level = "nominal" if kind.nominal else "ordinal"
    used_kappas = [agreement.pair_kappa(p, weighting) for p in pairs if p.used]
    strata = kind.quality_strata(survey)
    per_aspect = []
    headline_rows, headline_accepted = rows, accepted_rows
    if strata:
        per_aspect = aspect_agreement(rows, labels, strata, accepted=accepted_labels, weighting=weighting,
                                      min_overlap=survey.min_pair_overlap)  # fmt: skip
        # alpha and split-half need one scale: the headline question's (overall), the rest per question
        headline = next(iter(strata))
        headline_rows = [r for r in rows if r["aspect"] == headline]
        headline_accepted = [r for r in accepted_rows if r["aspect"] == headline]
    return {
        "survey": survey.pk,
        "survey_name": survey.name,
        # A pairwise survey's rules judge every question it asks; a rating survey's the overall one.
        "aspect": kind.quality_aspect,
        "aspects": kind.quality_aspects(survey),
        "task_type": survey.task_type,
        "scale": scale,
        "computed_at": timezone.now().isoformat(),
        "settings": {
            "kappa_threshold": survey.kappa_threshold,
            "kappa_weighting": weighting,
            "min_pair_overlap": survey.min_pair_overlap,
            "min_seconds_per_item": survey.min_seconds_per_item,
            "attention_policy": survey.attention_policy,
            "max_pasted_share": survey.max_pasted_share,
            "min_competence": survey.min_competence,
            **kind.rule_settings(survey),
        },
        "n_ratings": len(rows),
        "n_accepted_ratings": len(accepted_rows),
        "n_responses": len({r.get("unit", r["response_id"]) for r in rows}),
        "n_annotators": len(annotators),
        "n_excluded": len(excluded),
        "pairs": [p.as_dict() for p in pairs],
        "annotators": annotators,
        "median_kappa": agreement.median_kappa(pairs, weighting=weighting),
        "median_kappa_accepted": agreement.median_kappa(pairs, weighting=weighting, annotators=accepted_labels),
        "kappa_histogram": agreement.kappa_histogram(used_kappas),
        "alpha": agreement.krippendorff_alpha(_triples(headline_accepted, labels), scale=scale, level=level),
        "alpha_all": agreement.krippendorff_alpha(_triples(headline_rows, labels), scale=scale, level=level),
        "split_half": agreement.split_half_agreement(
            _triples(headline_accepted, labels), n_splits=SPLIT_HALF_SPLITS, seed=SPLIT_HALF_SEED
        ),
        # Per question when the rules judge several, each on its own scale ([] otherwise).
        "aspects_agreement": per_aspect,
        "attention": data.attention_by_kind(survey),
        "time_per_item": _time_summary(rows),
    }


def dataset_report(surveys, reports):
    """The agreement over several surveys of a dataset (with their `reports`), not cached.

    Pairwise surveys are left out (their kappas are on first / tie / second). Pairs and
    annotators are listed per survey (each entry names its survey); the median is over all used
    pairs; alpha and split-half are over the accepted ratings of all surveys,
    each survey's annotators kept apart (the same person in two surveys counts twice).
    """
    pairs, annotators, kappas, accepted, accepted_all = [], [], [], [], []
    for survey, report in zip(surveys, reports, strict=True):
        if kind_for(survey).nominal:
            continue  # its kappas are on nominal labels (first / tie / second), not on the rating scale
        pairs += [{**p, "survey": survey.name} for p in report["pairs"]]
        annotators += [{**a, "survey": survey.name} for a in report["annotators"]]
        weighting = agreement.WEIGHTINGS[survey.kappa_weighting]
        kappas += [p[weighting] for p in report["pairs"] if p["used"]]
        excluded = {a["annotator_id"] for a in report["annotators"] if a["excluded"]}
        for row in data.rating_rows(surveys=[survey]):
            triple = ((survey.pk, row["annotator_id"]), row["response_id"], row["score"])
            accepted_all.append(triple)
            if row["annotator_id"] not in excluded:
                accepted.append(triple)
    scale = reports[0]["scale"] if reports else list(data.DEFAULT_SCALE)
    return {
        "surveys": [survey.name for survey in surveys],
        "scale": scale,
        "n_ratings": len(accepted_all),
        "n_accepted_ratings": len(accepted),
        "pairs": pairs,
        "annotators": annotators,
        "median_kappa": float(median(kappas)) if kappas else None,
        "kappa_histogram": agreement.kappa_histogram(kappas),
        "alpha": agreement.krippendorff_alpha(accepted, scale=scale),
        "alpha_all": agreement.krippendorff_alpha(accepted_all, scale=scale),
        "split_half": agreement.split_half_agreement(accepted, n_splits=SPLIT_HALF_SPLITS, seed=SPLIT_HALF_SEED),
    }
