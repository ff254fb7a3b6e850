"""The Human Evaluation Datasheet (HEDS, Shimorina & Belz; sections of version 3.0) of a survey,
filled from what RateLab knows, and the figures a methods paragraph states.

`figures(survey)` reads the rows once (the quality report for agreement and exclusions, the
kind's quality rows for raters per item, assignments for times, the pay settings, consent and
questionnaires); `datasheet(survey)` arranges them as HEDS's sections of questions. A question
RateLab cannot answer (the systems' descriptions, the evaluators' expertise, the ethics approval)
has `value` None and `source` "researcher": the renderers mark it to be filled in.
Rendering (Markdown, JSON, LaTeX) is in `annotation.services.datasheet_render`.
"""

import statistics
from collections import defaultdict

from annotation.kinds.registry import kind_for
from annotation.models import (
    Assignment,
    ConsentResponse,
    ParticipantDeletion,
    ProlificStudy,
    QuestionnaireResponse,
    Survey,
)
from annotation.quality.selectors import survey_quality
from annotation.services import consent as consent_service
from annotation.views.task_page.wording import task_wording

HEDS_VERSION = "3.0"


def _median_task_seconds(survey):
    seconds = [
        (row["submitted_at"] - row["assigned_at"]).total_seconds()
        for row in Assignment.objects.filter(
            hit__survey=survey, status__in=Assignment.FINISHED, assigned_at__isnull=False, submitted_at__isnull=False
        ).values("assigned_at", "submitted_at")
    ]
    return (statistics.median(seconds) if seconds else None), len(seconds)


def _raters_per_item(rows):
    raters = defaultdict(set)
    for row in rows:
        raters[row["response_id"]].add(row["annotator_id"])
    counts = [len(people) for people in raters.values()]
    if not counts:
        return {"items": 0, "mean": None, "min": None, "max": None}
    return {"items": len(counts), "mean": sum(counts) / len(counts), "min": min(counts), "max": max(counts)}


def _pay(survey, median_seconds, *, item_seconds=None):
    """Reward per task, its currency, where it was set, the measured median and the hourly rate it makes.
    No hourly rate when the median task is shorter than the median time on one of its items: task
    timings that short cannot be true (simulated answers, as in the demo), and the rate would be absurd."""
    study = ProlificStudy.objects.filter(survey=survey).first() if survey.provider == Survey.Provider.PROLIFIC else None
    if study is not None:
        cents, currency, per = study.reward_cents, study.currency, "participant (Prolific study)"
        measured = study.measured_median_seconds or median_seconds
        source = "Prolific's measured median" if study.measured_median_seconds else "RateLab's task timings"
    elif survey.provider in (Survey.Provider.IMPORTED,):
        return None
    else:
        cents, currency, per = (
            survey.reward_cents,
            ("USD" if survey.provider == Survey.Provider.MTURK else None),
            "task",
        )
        measured, source = median_seconds, "RateLab's task timings"
    implausible = bool(measured and item_seconds and measured < item_seconds)
    hourly = cents / 100 / (measured / 3600) if measured and not implausible else None
    if implausible:
        source += "; shorter than the median time on one item, so no hourly rate is given"
    return {
        "reward": cents / 100,
        "currency": currency,
        "per": per,
        "median_seconds": measured,
        "median_source": source,
        "hourly": hourly,
    }


def _layout(survey):
    """How the tasks were laid out; the seed only where `Survey.layout_seed_public` allows (a
    datasheet shared while the study still runs, a preregistration say, must not carry it)."""
    public = survey.layout_seed_public
    return {
        "imported": survey.provider == Survey.Provider.IMPORTED,
        "seeded": bool(survey.layout_seed),
        "seed": survey.layout_seed if public else None,
        "withheld": bool(survey.layout_seed) and not public,
    }


def _layout_text(layout):
    if layout["imported"]:
        return "the judgements were imported; RateLab laid out no tasks"
    if layout["seed"] is not None:
        return (
            f"laid out by RateLab from the seed “{layout['seed']}”: the same dataset, settings and RateLab "
            "release lay the same items, attention checks included, out in the same tasks and places"
        )
    if layout["withheld"]:
        return (
            "laid out by RateLab from a fixed seed, withheld until the survey is closed "
            "(with the dataset it tells where the attention checks are)"
        )
    return "laid out by RateLab at random (no seed was set), so no other server can lay them out the same way"


def figures(survey):
    """Every number the datasheet and the methods paragraph state, read once from the rows."""
    kind = kind_for(survey)
    report = survey_quality(survey=survey) or {}
    rows = kind.quality_rows(survey)
    median_seconds, n_timed = _median_task_seconds(survey)
    finished = Assignment.objects.filter(hit__survey=survey, status__in=Assignment.FINISHED)
    workers = set(finished.exclude(annotator=None).values_list("annotator_id", flat=True))
    workers |= {row["annotator_id"] for row in rows}
    dates = sorted(d for d in finished.values_list("submitted_at", flat=True) if d)
    attention = report.get("attention") or {}
    checks_total = sum(entry.get("total", 0) for entry in attention.values())
    checks_failed = sum(entry.get("failed", 0) for entry in attention.values())
    excluded = [entry for entry in report.get("annotators", []) if entry.get("excluded")]
    reasons = defaultdict(int)
    for entry in excluded:
        for reason in entry.get("reasons") or [{"rule": "manual"}]:
            reasons[reason.get("rule", "manual")] += 1
    aspects = [
        {
            "key": aspect.key,
            "question": aspect.question,
            "definition": aspect.definition,
            "scale": [aspect.scale_min, aspect.scale_max],
            "labels": aspect.scale_labels,
        }
        for aspect in survey.aspects.all()
    ]
    setup = consent_service.setup_for(survey)
    consent_counts = {"accepted": 0, "declined": 0}
    latest = {}
    for response in ConsentResponse.objects.filter(survey=survey).order_by("pk"):
        latest[(response.annotator_id, response.version)] = response.accepted
    for accepted in latest.values():
        consent_counts["accepted" if accepted else "declined"] += 1
    split = report.get("split_half")
    return {
        "survey": survey.name,
        "task": task_wording(survey)["title"],
        "task_type": survey.get_task_type_display(),
        "description": kind.describe(survey),
        "dataset": survey.dataset.name,
        "dataset_contexts": survey.dataset.contexts.count(),
        "systems": sorted(survey.systems.values_list("name", flat=True))
        or sorted(survey.dataset.systems.values_list("name", flat=True)),
        "items": _raters_per_item(rows)["items"],
        "judgements": len(rows),
        "judgements_accepted": report.get("n_accepted_ratings"),
        "raters_per_item": _raters_per_item(rows),
        "hits": survey.hits.count(),
        "contexts_per_hit": survey.contexts_per_hit,
        "assignments_per_hit": survey.assignments_per_hit,
        "max_hits_per_annotator": survey.max_hits_per_annotator,
        "assignment_minutes": survey.assignment_minutes,
        "tasks_finished": finished.count(),
        "evaluators": len(workers),
        "excluded": len(excluded),
        "exclusion_reasons": dict(sorted(reasons.items())),
        "attention_checks_per_hit": survey.attention_checks_per_hit,
        "attention_policy": survey.get_attention_policy_display(),
        "checks_answered": checks_total,
        "checks_failed": checks_failed,
        "exclusion_rules": {
            "kappa_threshold": survey.kappa_threshold,
            "kappa_weighting": survey.get_kappa_weighting_display(),
            "min_pair_overlap": survey.min_pair_overlap,
            "min_seconds_per_item": survey.min_seconds_per_item,
        },
        "alpha": report.get("alpha"),
        "alpha_all": report.get("alpha_all"),
        "median_kappa": report.get("median_kappa"),
        "split_half": split,
        "median_task_seconds": median_seconds,
        "median_item_seconds": (report.get("time_per_item") or {}).get("median"),
        "tasks_timed": n_timed,
        "pay": _pay(survey, median_seconds, item_seconds=(report.get("time_per_item") or {}).get("median")),
        "platform": survey.get_provider_display(),
        "first_submission": dates[0].date().isoformat() if dates else None,
        "last_submission": dates[-1].date().isoformat() if dates else None,
        "aspects": aspects,
        "instructions": survey.instructions,
        "consent": {
            "asked": bool(setup and setup.consent_text),
            "version": setup.consent_version if setup and setup.consent_text else None,
            **consent_counts,
        },
        "questionnaires": {
            "pre_questions": len(setup.pre_questions) if setup else 0,
            "post_questions": len(setup.post_questions) if setup else 0,
            "pre_answered": QuestionnaireResponse.objects.filter(survey=survey, phase="pre").count(),
            "post_answered": QuestionnaireResponse.objects.filter(survey=survey, phase="post").count(),
            "pre_keys": [q["label"] for q in setup.pre_questions] if setup else [],
        },
        "deletions": ParticipantDeletion.objects.filter(survey=survey).count(),
        "layout": _layout(survey),
    }


def _field(code, question, value, *, source="RateLab"):
    """One HEDS question: `value` None marks it for the researcher."""
    return {"id": code, "question": question, "value": value, "source": source if value is not None else "researcher"}


def _money(pay):
    if not pay:
        return None
    currency = f" {pay['currency']}" if pay["currency"] else " (currency as set on the platform)"
    text = f"{pay['reward']:.2f}{currency} per {pay['per']}"
    if pay["median_seconds"]:
        text += f"; median time {pay['median_seconds'] / 60:.1f} min ({pay['median_source']})"
    if pay["hourly"] is not None:
        text += f"; about {pay['hourly']:.2f}{currency.split(' (', maxsplit=1)[0]} an hour"
    return text


def _fmt(value, digits=2):
    return None if value is None else f"{value:.{digits}f}"


def datasheet(survey, facts=None):
    """HEDS's sections as `[{"section", "title", "fields": [...]}]`, with the figures under "figures"."""
    f = facts or figures(survey)
    raters = f["raters_per_item"]
    consent = f["consent"]
    questionnaires = f["questionnaires"]
    split = f["split_half"] or {}
    reasons = ", ".join(f"{rule}: {count}" for rule, count in f["exclusion_reasons"].items()) or "none"
    aspects = "; ".join(
        f"{a['key']}: “{a['question']}”"
        + (f" ({a['definition']})" if a["definition"] else "")
        + f", scale {a['scale'][0]}–{a['scale'][1]}"
        + (
            " (" + ", ".join(f"{value} = {label}" for value, label in sorted(a["labels"].items())) + ")"
            if a["labels"]
            else ""
        )
        for a in f["aspects"]
    )
    sections = [
        {
            "section": "system",
            "title": "Evaluated system(s)",
            "fields": [
                _field("system.names", "Which systems were evaluated?", ", ".join(f["systems"]) or None),
                _field(
                    "system.task",
                    "What task do the systems perform?",
                    "dialogue response generation (a reply to a conversation context)",
                ),
                _field(
                    "system.input_output",
                    "What are the system inputs and outputs?",
                    f"input: a conversation context from dataset {f['dataset']!r}; output: the next turn",
                ),
                _field("system.descriptions", "Describe each system (architecture, training data, version).", None),
                _field("system.language", "In which language(s) are inputs and outputs?", None),
            ],
        },
        {
            "section": "sample",
            "title": "Sample of system outputs",
            "fields": [
                _field(
                    "sample.size",
                    "How many outputs (items) were evaluated?",
                    f"{f['items']} items with {f['judgements']} judgements",
                ),
                _field(
                    "sample.contexts",
                    "How many inputs does the test set hold, and how many were used?",
                    f"{f['dataset_contexts']} contexts in the dataset; {f['hits']} tasks of "
                    f"{f['contexts_per_hit']} contexts each",
                ),
                _field("sample.selection", "How were the items selected?", None),
                _field("sample.power", "Was a power analysis done, and with what result?", None),
            ],
        },
        {
            "section": "evaluators",
            "title": "Evaluators",
            "fields": [
                _field(
                    "evaluators.number",
                    "How many evaluators took part?",
                    f"{f['evaluators']} ({f['excluded']} excluded by the quality rules or by hand)",
                ),
                _field(
                    "evaluators.type",
                    "What kind of evaluators were they, and how were they recruited?",
                    f"crowd workers via {f['platform']}",
                ),
                _field(
                    "evaluators.per_item",
                    "How many evaluators judged each item?",
                    None
                    if raters["mean"] is None
                    else f"mean {raters['mean']:.2f} (min {raters['min']}, max {raters['max']}); "
                    f"{f['assignments_per_hit']} planned per task",
                ),
                _field("evaluators.pay", "How were evaluators paid, and how much per hour?", _money(f["pay"])),
                _field("evaluators.expertise", "What expertise or training did they have?", None),
                _field(
                    "evaluators.demographics",
                    "What is known about the evaluators (demographics, language)?",
                    f"pre-task questionnaire of {questionnaires['pre_questions']} questions answered by "
                    f"{questionnaires['pre_answered']}: " + "; ".join(questionnaires["pre_keys"])
                    if questionnaires["pre_questions"]
                    else None,
                ),
                _field(
                    "evaluators.training",
                    "What instructions or training were they given?",
                    "written instructions on the start and task pages"
                    + (f" ({len(f['instructions'])} characters)" if f["instructions"] else ""),
                ),
            ],
        },
        {
            "section": "design",
            "title": "Experimental design",
            "fields": [
                _field("design.method", "What did evaluators do?", f"{f['task_type']}: {f['description']}"),
                _field(
                    "design.interface",
                    "What interface was used?",
                    "RateLab's web task pages (desktop and phone), one task of "
                    f"{f['contexts_per_hit']} contexts per page, "
                    f"at most {f['max_hits_per_annotator']} tasks per evaluator, "
                    f"{f['assignment_minutes']} minutes per task",
                ),
                _field(
                    "design.checks",
                    "Which quality checks were used, and what did they find?",
                    f"{f['attention_checks_per_hit']} attention check(s) per task (policy: {f['attention_policy']}); "
                    f"{f['checks_failed']} of {f['checks_answered']} check answers failed",
                ),
                _field(
                    "design.layout",
                    "How were items assigned to tasks, and can that assignment be reproduced?",
                    _layout_text(f["layout"]),
                ),
                _field(
                    "design.exclusions",
                    "Which evaluators or judgements were excluded, by which rule?",
                    f"{f['excluded']} evaluators excluded ({reasons}); "
                    f"{f['judgements_accepted']} of {f['judgements']} judgements kept",
                ),
                _field(
                    "design.dates",
                    "When were the judgements collected?",
                    f"{f['first_submission']} to {f['last_submission']}" if f["first_submission"] else None,
                ),
                _field(
                    "design.time",
                    "How long did a task take?",
                    None
                    if f["median_task_seconds"] is None
                    else f"median {f['median_task_seconds'] / 60:.1f} min over {f['tasks_timed']} tasks (start to "
                    "hand-in)"
                    + (
                        f"; median {f['median_item_seconds']:.1f} s per judged item"
                        if f["median_item_seconds"] is not None
                        else ""
                    ),
                ),
            ],
        },
        {
            "section": "quality_criteria",
            "title": "Quality criteria",
            "fields": [
                _field(
                    "criteria.definitions",
                    "What was assessed, with which question, definition and scale?",
                    aspects or None,
                ),
                _field(
                    "criteria.agreement",
                    "What was the inter-annotator agreement?",
                    None
                    if f["alpha"] is None
                    else f"Krippendorff's alpha {f['alpha']:.3f} "
                    f"(kept judgements; {_fmt(f['alpha_all'], 3)} with all); "
                    f"median pairwise Cohen's kappa {_fmt(f['median_kappa'], 3)}"
                    + (f"; split-half {split.get('mean'):.3f}" if isinstance(split.get("mean"), int | float) else ""),
                ),
                _field("criteria.frame", "Were items judged one by one or relative to each other?", f["task_type"]),
            ],
        },
        {
            "section": "ethics",
            "title": "Ethics",
            "fields": [
                _field("ethics.approval", "Which ethics board approved the study (reference)?", None),
                _field(
                    "ethics.consent",
                    "How was informed consent obtained?",
                    f"consent page (version {consent['version']}) before any task: {consent['accepted']} accepted, "
                    f"{consent['declined']} declined; those who declined were given no work"
                    if consent["asked"]
                    else None,
                ),
                _field(
                    "ethics.questionnaires",
                    "Which questionnaires were used?",
                    f"{questionnaires['pre_questions']} questions before and "
                    f"{questionnaires['post_questions']} after the tasks, "
                    "each with “prefer not to say”; "
                    f"answered {questionnaires['pre_answered']} / {questionnaires['post_answered']} times"
                    if questionnaires["pre_questions"] or questionnaires["post_questions"]
                    else "none",
                ),
                _field(
                    "ethics.data",
                    "How is personal data protected?",
                    "exports name evaluators by pseudonyms (A1, A2, ...); "
                    "questionnaire answers are stored per evaluator, "
                    f"summarised for staff as counts only, and deleted on request ({f['deletions']} deletions so far)",
                ),
                _field("ethics.risks", "What risks to evaluators were considered (e.g. offensive content)?", None),
            ],
        },
    ]
    return {"heds_version": HEDS_VERSION, "survey": f["survey"], "sections": sections, "figures": f}
