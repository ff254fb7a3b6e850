"""Creating a survey and moving it through its life: draft → live ⇄ paused → closed."""

import re

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.crowd import get_provider
from annotation.kinds.registry import all_kinds, kind_for, kind_named
from annotation.models import Aspect, AttentionCheck, Survey, System
from annotation.services.hits import hits_generate
from annotation.services.tasks.pages import render_hit_pages

# Settings a caller may pass to survey_create; anything else is a typo and is refused.
SURVEY_SETTINGS = (
    "task_type",
    "provider",
    "instructions",
    "write_system_name",
    "reference_llm_systems",
    "contexts_per_hit",
    "assignments_per_hit",
    "attention_checks_per_hit",
    "overlap_contexts",
    "max_hits_per_annotator",
    "assignment_minutes",
    "new_annotators_per_address_hour",
    "reward_cents",
    "attention_policy",
    "kappa_threshold",
    "kappa_weighting",
    "min_pair_overlap",
    "min_seconds_per_item",
    "max_position_bias",
    "min_position_judgements",
    "min_repeat_consistency",
    "min_repeats",
    "max_pasted_share",
    "min_competence",
    "pair_budget",
    "reference_pairs",
    "allow_tie",
    "ask_strength",
    "ask_reason",
    "tuple_size",
    "bws_across_contexts",
    "layout_seed",
)


DEFAULT_SCALE_LABELS = {"1": "Not appropriate or sensible", "5": "Very reasonable"}


class SurveyError(Exception):
    """A survey operation was refused; the message is safe to show a researcher."""


# An aspect's key names the page's form fields (`score-<item>-<key>`), which the submit parser reads
# with [\w-]; ASCII keeps it also a valid slug, and the column holds 50 characters.
ASPECT_KEY_MAX = Aspect._meta.get_field("key").max_length
_ASPECT_KEY = re.compile(rf"^[-a-zA-Z0-9_]{{1,{ASPECT_KEY_MAX}}}$")
ASPECT_KEY_RULE = (
    f"an aspect name may hold only the letters a-z and A-Z, digits, '-' and '_' (no spaces), "
    f"at most {ASPECT_KEY_MAX} characters, e.g. topicality or topic-relevance"
)


def aspect_key_problem(key):
    """Why `key` cannot name an aspect (a message naming it and the rule), or None when it can."""
    if isinstance(key, str) and _ASPECT_KEY.match(key):
        return None
    shown = str(key)
    shown = shown if len(shown) <= 60 else shown[:60] + "…"
    return f"Aspect {shown!r} cannot be used: {ASPECT_KEY_RULE}."


def _aspect_spec(spec, position, *, kind):
    if isinstance(spec, str):
        spec = {"key": spec}
    key = spec["key"].strip()
    problem = aspect_key_problem(key)
    if problem:
        raise SurveyError(problem)
    label = key.replace("-", " ").replace("_", " ")
    default = kind.aspect_question(label)
    question = spec.get("question") or default or f"How would you rate the {key.replace('-', ' ')} of this response?"
    return Aspect(
        key=key,
        position=position,
        question=question,
        definition=spec.get("definition", ""),
        scale_min=spec.get("scale_min", 1),
        scale_max=spec.get("scale_max", 5),
        scale_labels=spec.get("scale_labels", {}),
        per_turn=bool(spec.get("per_turn", False)),
    )


@transaction.atomic
def survey_create(
    *,
    dataset,
    name,
    owner,
    systems=None,
    aspects=(),
    question=None,
    scale_labels=None,
    gold_checks=(),
    generate=True,
    **settings,
):
    """Create a survey over `dataset` and lay out its HITs.

    `systems`: names (or System rows) whose responses are rated; default all of the dataset's.
    `aspects`: extra scales beside `overall` (keys, or dicts with key/question/definition/scale_min/
    scale_max/scale_labels).
    `gold_checks`: researcher-defined checks, dicts with turns, response_text, accepted_scores.
    Other keyword arguments set Survey fields (contexts_per_hit, assignments_per_hit, ...).
    """
    unknown = sorted(set(settings) - set(SURVEY_SETTINGS))
    if unknown:
        raise SurveyError(f"Unknown survey setting(s): {', '.join(unknown)}.")
    if Survey.objects.filter(name=name, owner=owner).exists():  # unique per owner: others' names stay unknown
        raise SurveyError(f"A survey named {name!r} already exists.")
    survey = Survey(dataset=dataset, name=name, owner=owner, **settings)
    survey.instructions = default_instructions(survey)
    try:
        survey.full_clean(exclude=["owner"])
    except ValidationError as error:
        raise SurveyError("; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())) from error
    kind = kind_for(survey)
    problem = kind.survey_problem(survey)
    if problem:
        raise SurveyError(problem)
    problem = reference_pairs_problem(
        dataset=dataset, task_type=survey.task_type, reference_pairs=survey.reference_pairs, systems=systems
    )
    if problem:
        raise SurveyError(problem)
    try:
        survey.save()
    except IntegrityError:  # the same owner made a survey of this name at the same moment
        raise SurveyError(f"A survey named {name!r} already exists.") from None

    survey_contents_set(
        survey=survey,
        systems=systems,
        aspects=aspects,
        question=question,
        scale_labels=scale_labels,
        gold_checks=gold_checks,
    )
    if generate:
        hits_generate(survey=survey)
    return survey


def survey_contents_set(*, survey, systems=None, aspects=(), question=None, scale_labels=None, gold_checks=()):
    """Give a saved survey its systems, aspects (overall first) and gold checks, as survey_create
    describes them; a draft's edit (services/drafts.py) calls it again after clearing them."""
    dataset, kind = survey.dataset, kind_for(survey)
    if systems:
        chosen = [s for s in systems if isinstance(s, System)]
        names = [s for s in systems if not isinstance(s, System)]
        found = list(System.objects.filter(dataset=dataset, name__in=names))
        missing = sorted(set(names) - {s.name for s in found})
        if missing:
            raise SurveyError(f"Dataset {dataset.name!r} has no system(s) named {', '.join(missing)}.")
        survey.systems.set(chosen + found)

    defaults = kind.default_aspects(dataset)
    overall_scale = {}
    if defaults and not aspects:
        # The kind's own questions (a conversation survey's FED aspects and ParlAI flags), overall first.
        question = question or defaults[0]["question"]
        scale_labels = scale_labels or defaults[0]["scale_labels"]
        overall_scale = {k: defaults[0][k] for k in ("scale_min", "scale_max") if k in defaults[0]}
        aspects = defaults[1:]
    overall = Aspect(key=Aspect.OVERALL, position=0, scale_labels=scale_labels or DEFAULT_SCALE_LABELS, **overall_scale)
    if question:
        overall.question = question
    elif kind.default_question:
        overall.question = kind.default_question
    extra = [_aspect_spec(spec, position, kind=kind) for position, spec in enumerate(aspects, start=1)]
    keys = [a.key for a in [overall, *extra]]
    if len(set(keys)) != len(keys):
        raise SurveyError("Aspect keys must be distinct (and `overall` is always present).")
    for aspect in [overall, *extra]:
        aspect.survey = survey
        if aspect.scale_max <= aspect.scale_min:
            raise SurveyError(f"Aspect {aspect.key!r}: the scale's maximum must exceed its minimum.")
    Aspect.objects.bulk_create([overall, *extra])

    for check in gold_checks:
        accepted = [int(s) for s in check["accepted_scores"]]
        if not accepted or not check.get("response_text"):
            raise SurveyError("A gold check needs a response text and at least one accepted score.")
        AttentionCheck.objects.create(
            survey=survey, turns=check.get("turns", []), response_text=check["response_text"], accepted_scores=accepted
        )


def reference_pairs_problem(*, dataset, task_type, reference_pairs, systems=()):
    """Why a survey cannot compare with the dataset's references as asked (None when it can).
    `systems`: the chosen names (empty means all of the dataset's)."""
    if reference_pairs == Survey.ReferencePairs.NONE:
        return None
    return kind_named(task_type).reference_pairs_problem(
        dataset=dataset, reference_pairs=reference_pairs, systems=systems
    )


def instructions_by_type(*, allow_tie=True):
    """The default instructions of each task type (the survey form offers them as the type changes)."""
    return {kind.name: kind.instructions(allow_tie=allow_tie) for kind in all_kinds()}


def default_instructions(survey):
    """The survey's instructions, or, where they are one of the defaults (the form's, whatever type
    it showed), those of its own task type: a comparison or writing task must not tell annotators
    to judge one reply's appropriateness, nor a comparison without ties offer "about the same"."""
    defaults = {*instructions_by_type().values(), *instructions_by_type(allow_tie=False).values()}
    if survey.instructions not in defaults:
        return survey.instructions
    return kind_for(survey).instructions(allow_tie=survey.allow_tie)


def _set_status(survey, status, allowed_from, **fields):
    if survey.status not in allowed_from:
        raise SurveyError(f"Survey {survey.name!r} is {survey.status}; it cannot become {status}.")
    survey.status = status
    for key, value in fields.items():
        setattr(survey, key, value)
    survey.save(update_fields=["status", *fields])


def survey_launch(*, survey):
    """Open the survey to annotators (and publish it on its crowd provider).

    Three steps: the HITs are made (committed: a draft with HITs is still a draft); the provider
    prepares what publishing needs and records it, committed on its own (a Prolific draft study's
    id); then the launch itself, in one transaction. A failure in the last step (Prolific refusing
    the PUBLISH transition) leaves the survey a draft with its prepared study recorded, and
    launching again publishes that same study rather than creating another.
    """
    survey = _survey_hits_ready(survey=survey)
    if survey.status != Survey.Status.LIVE and survey.launched_at is None:
        get_provider(survey).prepare(survey=survey)
    return _survey_open(survey=survey)


@transaction.atomic
def _survey_hits_ready(*, survey):
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if survey.status == Survey.Status.LIVE:
        return survey
    if survey.provider == Survey.Provider.IMPORTED:
        raise SurveyError("An imported survey holds finished judgements and cannot be launched.")
    if survey.status not in (Survey.Status.DRAFT, Survey.Status.PAUSED):
        # Refused here, before HITs are made or the provider prepares anything (a Prolific draft).
        raise SurveyError(f"Survey {survey.name!r} is {survey.status}; it cannot become {Survey.Status.LIVE}.")
    if not survey.hits.exists():
        hits_generate(survey=survey)
    if not survey.hits.exists():
        raise SurveyError("The survey has no HITs: its dataset has no contexts with responses of the chosen systems.")
    return survey


@transaction.atomic
def _survey_open(*, survey):
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if survey.status == Survey.Status.LIVE:
        return survey
    first_launch = survey.launched_at is None
    _set_status(
        survey,
        Survey.Status.LIVE,
        {Survey.Status.DRAFT, Survey.Status.PAUSED},
        **({"launched_at": timezone.now()} if first_launch else {}),
    )
    if first_launch:
        get_provider(survey).publish(survey=survey)
    else:
        get_provider(survey).resume(survey=survey)  # after a pause: the platform recruits again
    # Each HIT's blank page, rendered once for every server process (pages render themselves
    # meanwhile); a relaunch renders only what a deploy has made outdated.
    survey_id = survey.pk
    transaction.on_commit(lambda: render_hit_pages.delay(survey_id))
    return survey


@transaction.atomic
def survey_pause(*, survey):
    """Stop handing out new work; annotators already on a HIT may still submit it."""
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if survey.status != Survey.Status.PAUSED:
        _set_status(survey, Survey.Status.PAUSED, {Survey.Status.LIVE})
        # The platform stops recruiting too (Prolific would otherwise keep sending participants to
        # a survey with no work for them); a refusal there rolls the pause back.
        get_provider(survey).pause(survey=survey)
    return survey


@transaction.atomic
def survey_close(*, survey):
    """Close for good: no new work; the provider stops offering what is left."""
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if survey.status == Survey.Status.CLOSED:
        return survey
    _set_status(
        survey,
        Survey.Status.CLOSED,
        {Survey.Status.DRAFT, Survey.Status.LIVE, Survey.Status.PAUSED},
        closed_at=timezone.now(),
    )
    if survey.provider != Survey.Provider.IMPORTED:
        get_provider(survey).expire(survey=survey)
    return survey


def survey_reopen_refusal(*, survey):
    """Why this closed survey cannot be reopened, or None when reopening is safe.

    Safe means nothing outside the app was undone by closing it. A local survey's link is checked
    against the survey's status on every claim and closing expired nothing, so it may reopen. An
    MTurk survey's HITs were expired on Mechanical Turk when it closed: reopening here would leave
    the app offering work the platform no longer shows, so it stays closed (create a new survey).
    Imported judgements were never open.
    """
    if survey.status != Survey.Status.CLOSED:
        return f"Survey {survey.name!r} is {survey.get_status_display().lower()}, not closed."
    if survey.provider == Survey.Provider.IMPORTED:
        return "An imported survey holds finished judgements; there is nothing to reopen."
    if survey.provider != Survey.Provider.LOCAL:
        return (
            f"Closing expired this survey's HITs on {survey.get_provider_display()}; they cannot be offered "
            "again from here. Create a new survey for more ratings."
        )
    return None


@transaction.atomic
def survey_reopen(*, survey):
    """Undo a close where that is safe (see survey_reopen_refusal). The survey comes back paused
    (a draft if it never went live), so no annotator gets work until the researcher launches it."""
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    refusal = survey_reopen_refusal(survey=survey)
    if refusal:
        raise SurveyError(refusal)
    status = Survey.Status.PAUSED if survey.launched_at else Survey.Status.DRAFT
    _set_status(survey, status, {Survey.Status.CLOSED}, closed_at=None)
    return survey
