"""The survey form's live chat fields: what `create_survey --task-type chat` asks, on the page.

The survey form adds them (shown for the chat type only, as each kind's own fields) and the chat
kind makes the survey from them with `chat_survey_create`, in one transaction as the command does.
A draft's chat settings are fixed once it is made: the edit form shows them, disabled.
"""

import copy

from django import forms

from annotation.kinds.chat.setup import chat_survey_create
from annotation.models import ChatSurveySettings, ChatSystem

DEFAULT_MIN_TURNS = 5
DEFAULT_CONVERSATIONS_PER_SYSTEM = 5
PREFIX = "Live chat: "


def _count(what, most, **extra):
    return forms.IntegerField(required=False, min_value=1, max_value=most, label=PREFIX + what, **extra)


def _effort(what, example, **bounds):
    return forms.FloatField(required=False, label=PREFIX + f"leave out a chat with {what}",
                            help_text=f"Effort rule, off when empty; e.g. {example}.", **bounds)  # fmt: skip


SHARE = {"min_value": 0, "max_value": 1}

# Every field but the chat systems (whose choices are the researcher's own): copied into each form.
SETTING_FIELDS = {
    "chat_opening": forms.ChoiceField(
        required=False,
        choices=ChatSurveySettings.Opening.choices,
        initial=ChatSurveySettings.Opening.ANNOTATOR,
        label=PREFIX + "who writes first",
    ),
    "chat_min_turns": _count("fewest annotator messages before End", 100, initial=DEFAULT_MIN_TURNS),
    "chat_max_turns": _count("most annotator messages", 100, help_text="Empty: 10, or the fewest when that is more."),
    "chat_conversations_per_system": _count(
        "conversations per chat system", 10_000, initial=DEFAULT_CONVERSATIONS_PER_SYSTEM
    ),
    "chat_seed_text": forms.CharField(
        required=False,
        max_length=500,
        label=PREFIX + "topic or persona shown to the annotator",
        help_text="Optional, e.g. “You are planning a weekend trip with a friend.”",
    ),
    "chat_turn_scales": forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label=PREFIX + "1–5 scales under each reply",
        help_text="Optional, one per line: a key, or key=question (fun=How much fun is this reply?). "
        "The flags under each reply are asked in any case.",
    ),
    "chat_effort_max_short_share": _effort("more than this share of messages under 3 words", 0.5, **SHARE),
    "chat_effort_max_pasted_share": _effort("more than this share of messages mostly pasted", 0.5, **SHARE),
    "chat_effort_max_idle_seconds": _effort("a longer gap without typing (seconds)", 300, min_value=1),
}
CHAT_FIELDS = ("chat_systems", *SETTING_FIELDS)


def chat_fields(owner):
    """The fields, by name; the chat systems offered are `owner`'s own."""
    names = list(ChatSystem.objects.filter(owner=owner).order_by("name").values_list("name", flat=True))
    systems_help = "Each annotator chats with one of them per conversation, never told which; each gets as many."
    if not names:
        systems_help = "You have no chat system yet: add one under Surveys → chat systems, then come back."
    systems = forms.MultipleChoiceField(
        required=False,
        choices=[(name, name) for name in names],
        widget=forms.CheckboxSelectMultiple,
        label=PREFIX + "chat systems",
        help_text=systems_help,
    )
    # Copies: a draft's edit form disables its fields, which must not reach the next form made.
    return {"chat_systems": systems, **copy.deepcopy(SETTING_FIELDS)}


def chat_fields_problems(data):
    """(field, message) for what a chat survey needs and the form lacks."""
    problems = []
    if not data.get("chat_systems"):
        problems.append(("chat_systems", "Tick at least one chat system: the annotators chat with it."))
    if data.get("chat_min_turns") is None:
        problems.append(("chat_min_turns", "Say how many messages an annotator writes at least before End."))
    return problems


def turn_scales_of(text):
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def chat_survey_from_form(*, data, common):
    """The chat survey the form's `data` asks for; `common`: what every kind's survey is made with."""
    common = {key: value for key, value in common.items() if key != "task_type"}
    return chat_survey_create(
        chat_systems=data["chat_systems"],
        min_turns=data["chat_min_turns"],
        max_turns=data.get("chat_max_turns"),
        conversations_per_system=data.get("chat_conversations_per_system") or DEFAULT_CONVERSATIONS_PER_SYSTEM,
        opening=data.get("chat_opening") or ChatSurveySettings.Opening.ANNOTATOR,
        seed_text=data.get("chat_seed_text") or "",
        turn_scales=turn_scales_of(data.get("chat_turn_scales")),
        effort_max_short_share=data.get("chat_effort_max_short_share"),
        effort_max_pasted_share=data.get("chat_effort_max_pasted_share"),
        effort_max_idle_seconds=data.get("chat_effort_max_idle_seconds"),
        **common,
    )


def chat_initial(survey):
    """A chat draft's settings as the form's initial values (shown disabled on its edit page)."""
    settings = getattr(survey, "chat_settings", None)
    if settings is None:
        return {}
    scales = [a for a in survey.aspects.order_by("position") if a.per_turn and a.scale_max - a.scale_min > 1]
    return {
        "chat_systems": list(settings.chat_systems.order_by("name").values_list("name", flat=True)),
        "chat_opening": settings.opening,
        "chat_min_turns": settings.min_turns,
        "chat_max_turns": settings.max_turns,
        "chat_conversations_per_system": settings.conversations_per_system,
        "chat_seed_text": settings.seed_text,
        "chat_turn_scales": "\n".join(f"{a.key}={a.question}" for a in scales),
        "chat_effort_max_short_share": settings.effort_max_short_share,
        "chat_effort_max_pasted_share": settings.effort_max_pasted_share,
        "chat_effort_max_idle_seconds": settings.effort_max_idle_seconds,
    }
