"""Creating a live chat survey: `services.survey_create` with the chat's own settings (its chat
systems, opening, minimum and maximum of annotator messages, conversations per system, the effort
rule's thresholds), all in one
transaction: a refused setting leaves no survey behind."""

from django.db import transaction

from annotation.kinds.conversation.questions import TURN_FLAGS, WHOLE_ASPECTS, default_aspect_specs
from annotation.models import ChatSurveySettings, ChatSystem
from annotation.services.hits import hits_generate
from annotation.services.surveys import SurveyError, survey_create

OPENINGS = tuple(ChatSurveySettings.Opening.values)
RESERVED_KEYS = tuple(key for key, *_ in WHOLE_ASPECTS) + tuple(key for key, _ in TURN_FLAGS)


def chat_settings_problem(*, min_turns, max_turns, conversations_per_system, opening):
    if min_turns < 1:
        return "--min-turns must be at least 1."
    if max_turns < min_turns:
        return f"--max-turns ({max_turns}) must be at least --min-turns ({min_turns})."
    if max_turns > 100:
        return "--max-turns may be at most 100."
    if conversations_per_system < 1:
        return "--conversations-per-system must be at least 1."
    if opening not in OPENINGS:
        return f"--opening must be one of {', '.join(OPENINGS)}."
    return None


def effort_rule_problem(*, effort_max_short_share, effort_max_pasted_share, effort_max_idle_seconds):
    for name, value in (
        ("--effort-max-short-share", effort_max_short_share),
        ("--effort-max-pasted-share", effort_max_pasted_share),
    ):
        if value is not None and not 0 <= value <= 1:
            return f"{name} must be a share between 0 and 1 (0.5: half of the messages), not {value:g}."
    if effort_max_idle_seconds is not None and not effort_max_idle_seconds > 0:
        return f"--effort-max-idle-seconds must be more than 0 seconds, not {effort_max_idle_seconds:g}."
    return None


def turn_scale_specs(turn_scales):
    """Aspect specs of the per-turn scales, from `"key"` or `"key=Question"` (1-5, asked under each of
    the system's replies)."""
    specs = []
    for given in turn_scales:
        key, _, question = str(given).partition("=")
        key, question = key.strip(), question.strip()
        label = key.replace("-", " ").replace("_", " ")
        specs.append({
            "key": key,
            "question": question or f"How good is this reply ({label})?",
            "scale_min": 1,
            "scale_max": 5,
            "scale_labels": {"1": "Very poor", "5": "Excellent"},
            "per_turn": True,
        })  # fmt: skip
    keys = [spec["key"] for spec in specs]
    clashes = sorted({key for key in keys if keys.count(key) > 1} | (set(keys) & set(RESERVED_KEYS)))
    if clashes:
        raise SurveyError(f"Per-turn scale {', '.join(clashes)} is named twice (or like a default question).")
    return specs


def chat_survey_create(
    *,
    dataset,
    name,
    owner,
    chat_systems,
    min_turns,
    max_turns=None,
    conversations_per_system=5,
    opening="annotator",
    seed_text="",
    effort_max_short_share=None,
    effort_max_pasted_share=None,
    effort_max_idle_seconds=None,
    turn_scales=(),
    **options,
):
    """A chat survey over `dataset` (which may hold nothing yet) with `owner`'s chat systems (names)."""
    names = [n for n in dict.fromkeys(chat_systems) if n]
    if not names:
        raise SurveyError("A chat survey needs at least one chat system (--chat-systems N1,N2).")
    max_turns = max_turns if max_turns is not None else max(min_turns, 10)
    problem = chat_settings_problem(
        min_turns=min_turns, max_turns=max_turns, conversations_per_system=conversations_per_system, opening=opening
    )
    effort = {
        "effort_max_short_share": effort_max_short_share,
        "effort_max_pasted_share": effort_max_pasted_share,
        "effort_max_idle_seconds": effort_max_idle_seconds,
    }
    problem = problem or effort_rule_problem(**effort)
    if problem:
        raise SurveyError(problem)
    found = list(ChatSystem.objects.filter(owner=owner, name__in=names))
    missing = sorted(set(names) - {s.name for s in found})
    if missing:
        raise SurveyError(f"You have no chat system named {', '.join(missing)} (add it with chat_system_add).")
    if turn_scales:
        # The questions of the survey (the kind's defaults unless given, overall first, which
        # survey_create always makes itself) and a 1-5 scale under each reply.
        aspects = options.get("aspects")
        if not aspects:
            overall, *aspects = default_aspect_specs()
            options.setdefault("question", overall["question"])
            options.setdefault("scale_labels", overall["scale_labels"])
        options["aspects"] = [*aspects, *turn_scale_specs(turn_scales)]
    options.setdefault("assignments_per_hit", 1)
    options.update(contexts_per_hit=1, attention_checks_per_hit=0, overlap_contexts=0)
    with transaction.atomic():
        survey = survey_create(dataset=dataset, name=name, owner=owner, task_type="chat", generate=False, **options)
        settings = ChatSurveySettings.objects.create(
            survey=survey,
            opening=opening,
            min_turns=min_turns,
            max_turns=max_turns,
            conversations_per_system=conversations_per_system,
            seed_text=seed_text[:500],
            **effort,
        )
        settings.chat_systems.set(found)
        hits_generate(survey=survey)
    return survey
