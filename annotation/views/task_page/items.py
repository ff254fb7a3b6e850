"""The items of one HIT as the annotator page shows them: blocks of conversation turns, each with
the replies to judge under it and a fieldset per rating scale.

Shared by the live page, the stored pages (`stored.hit_pages_render`) and the Mechanical
Turk frame, all of which render templates/annotation/task/_items.html from these blocks. Only
texts and HITItem ids reach the page: never system names, response ids or references.
"""

import collections

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from annotation.kinds.pairwise.answers import kept_strength
from annotation.kinds.rating.gold_turns import SPEAKER_SAMPLE, speaker_names, split_speaker, turn_text
from annotation.kinds.registry import kind_for
from annotation.models import Aspect, Context, HITItem, Response
from annotation.services.text.answer_seconds import seconds_or_none

INSTRUCTED_TEXT = "This is an attention check, not a real reply. Please choose {score} for this item."
# An instruction among filler replies is asked every question, as they are: it says so.
INSTRUCTED_BLOCK_TEXT = (
    "This is an attention check, not a real reply. Please choose {score} for every question about this reply."
)


def _turns(raw):
    turns = []
    for turn in raw or []:
        if isinstance(turn, dict):
            turns.append({"speaker": turn.get("speaker") or "", "text": turn.get("text", "")})
        else:
            turns.append({"speaker": "", "text": str(turn)})
    # Alternate the bubble side by position when the data names no speakers.
    for index, turn in enumerate(turns):
        turn["side"] = "left" if index % 2 == 0 else "right"
    return turns


def _speaker_sequences(survey):
    """The speaker names of the first conversations of the survey's dataset, one tuple each ("" for
    a turn that names none); read once per survey instance (a launch renders all its HITs with one)."""
    cached = getattr(survey, "_speaker_sequences", None)
    if cached is None:
        contexts = Context.objects.filter(dataset_id=survey.dataset_id).order_by("position")
        cached = [
            tuple((turn.get("speaker") or "") if isinstance(turn, dict) else "" for turn in turns or [])
            for turns in contexts.values_list("turns", flat=True)[:SPEAKER_SAMPLE]
        ]
        survey._speaker_sequences = cached
    return cached


def _gold_turns(survey, turns):
    """A gold check's turns, named as the dataset's conversations name their speakers when the
    check names none.

    The survey form takes a check's turns as plain texts; among conversations that all show
    "A:" and "B:", the one without names was the check. Its turns take the speaker sequence most
    common among the dataset's conversations of as many turns (else the last turns of longer
    ones: the reply follows the last turn). Turns written with a speaker of the dataset ("A: Is
    fire cold?") keep that speaker, shown once (gold_turns). Left as they are when the check
    names a speaker in its data or most of the dataset's conversations do not name all of theirs.
    """
    if not turns or any(isinstance(turn, dict) and turn.get("speaker") for turn in turns):
        return turns
    sequences = _speaker_sequences(survey)
    # Turns written as the dataset shows them ("A: Is fire cold?") name their speakers (F08).
    parsed = [split_speaker(turn_text(turn), speaker_names(sequences)) for turn in turns]
    if all(speaker for speaker, _ in parsed):
        return [{"speaker": speaker, "text": text} for speaker, text in parsed]
    if any(speaker for speaker, _ in parsed):
        turns = [{"speaker": speaker, "text": text} for speaker, text in parsed]
    named = [sequence for sequence in sequences if sequence and all(sequence)]
    if len(named) * 2 <= len(sequences):
        return turns
    n = len(turns)
    patterns = collections.Counter(s for s in named if len(s) == n) or collections.Counter(
        s[-n:] for s in named if len(s) > n
    )
    if not patterns:
        return turns
    speakers = patterns.most_common(1)[0][0]
    return [
        {"speaker": written or speaker, "text": text} for speaker, (written, text) in zip(speakers, parsed, strict=True)
    ]


# Where a scale's fragment takes the item id and its number on the page. Escaped text never holds
# a bare "<", so the markers can only match the places the fragment template put them.
ITEM_MARK = mark_safe("<ITEM>")
NUMBER_MARK = mark_safe("<NUMBER>")


PAIR_KINDS = (HITItem.Kind.PAIR, HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT, HITItem.Kind.PAIR_FILLER)
GOLD_KINDS = (HITItem.Kind.GOLD, HITItem.Kind.GOLD_FILLER)
BWS_KINDS = (HITItem.Kind.BWS, HITItem.Kind.BWS_GOLD, HITItem.Kind.BWS_FILLER)


class _Fieldsets:
    """Each scale's fieldset rendered once per selected value, then copied per item with its id."""

    def __init__(self, template):
        self.rendered = {}
        self.template = template

    def html(self, scale, item_id, number, selected, invalid):
        key = (scale["key"], len(scale.get("choices") or ()), selected, invalid)
        if key not in self.rendered:
            context = {
                "field": scale,
                "selected": selected,
                "invalid": invalid,
                "item_id": ITEM_MARK,
                "number": NUMBER_MARK,
            }
            self.rendered[key] = render_to_string(self.template, context).rstrip("\n")
        html = self.rendered[key].replace(ITEM_MARK, str(item_id)).replace(NUMBER_MARK, number)
        return mark_safe(html)


def _fields(item, scales, number, before, fieldsets, *, invalid):
    """The item's question fields, one per scale, with the answer given `before` selected."""
    given = before.get("scores", {})
    return [
        {
            "key": scale["key"],
            "name": f"score-{item.pk}-{scale['key']}",
            "html": fieldsets.html(scale, item.pk, str(number), str(given.get(scale["key"], "")), invalid),
        }
        for scale in scales
    ]


def _pair_item(item, aspects, number, previous, fieldsets, *, missing):
    """A pair: the left reply as A, the right as B (a gold pair's broken side shows its text)."""
    before = previous.get(item.pk, {})
    invalid = item.pk in missing
    # Check pairs ask every question, as real pairs do (fewer questions would give them away);
    # only the main question's answer is compared, and none is analysed.
    fields = _fields(item, aspects, number, before, fieldsets, invalid=invalid)
    left = item.response.text if item.response_id else item.broken_text
    right = item.response_b.text if item.response_b_id else item.broken_text
    return {
        "id": str(item.pk),
        "kind": "pair",
        "text_a": left,
        "text_b": right,
        "fields": fields,
        "number": str(number),
        "strength": kept_strength(before.get("scores", {}).get(Aspect.OVERALL), before.get("strength") or ""),
        "reason": before.get("reason") or "",
        "seconds": _seconds_given(before),
        "missing": invalid,
    }


def _tuple_item(item, aspects, number, previous, fieldsets, *, missing, texts):
    """A best-worst tuple: its replies numbered 1, 2, ... in shown order (a gold tuple's broken
    reply among them, shown as any other), then the best and worst questions with as many choices."""
    before = previous.get(item.pk, {})
    invalid = item.pk in missing
    size = len(item.tuple_responses)
    sized = [{**scale, "choices": scale["choices"][:size]} for scale in aspects]
    fields = _fields(item, sized, number, before, fieldsets, invalid=invalid)
    replies = [
        {"number": str(n), "text": item.broken_text if pk is None else texts.get(pk, "")}
        for n, pk in enumerate(item.tuple_responses, start=1)
    ]
    return {
        "id": str(item.pk),
        "kind": "bws",
        "replies": replies,
        "fields": fields,
        "number": str(number),
        "seconds": _seconds_given(before),
        "missing": invalid,
    }


def _tuple_texts(items):
    """The texts of every reply the page's tuples show, read in one query."""
    ids = {pk for item in items if item.kind in BWS_KINDS for pk in item.tuple_responses if pk}
    if not ids:
        return {}
    return dict(Response.with_references.filter(pk__in=ids).values_list("pk", "text"))


def _item(item, aspects, number, previous, fieldsets, *, missing, texts=None):
    if item.kind in BWS_KINDS:
        return _tuple_item(item, aspects, number, previous, fieldsets, missing=missing, texts=texts or {})
    if item.kind in PAIR_KINDS:
        return _pair_item(item, aspects, number, previous, fieldsets, missing=missing)
    if item.kind == HITItem.Kind.RESPONSE:
        text, scales = item.response.text, aspects
    elif item.kind == HITItem.Kind.GOLD:
        # Every question, as on a real reply, so that a gold item cannot be told apart by its
        # questions; only the main one is compared. An instructed item says it is a check (and,
        # among fillers, is asked every question too: it stands out by its words alone).
        text, scales = item.attention_check.response_text, aspects
    elif item.kind in HITItem.FILLERS:
        text, scales = item.response.text, aspects
    elif item.asks_main_only:
        text, scales = INSTRUCTED_TEXT.format(score=item.instructed_score), aspects[:1]
    elif item.kind == HITItem.Kind.INSTRUCTED:
        text, scales = INSTRUCTED_BLOCK_TEXT.format(score=item.instructed_score), aspects
    else:
        text, scales = "", []
    before = previous.get(item.pk, {})
    invalid = item.pk in missing
    fields = _fields(item, scales, number, before, fieldsets, invalid=invalid)
    # Numbers go to the template as text: every integer it prints passes through number
    # localisation, which on a 20-item page cost more than the rest of the rendering together.
    return {
        "id": str(item.pk),
        "kind": item.kind,
        "text": text,
        "fields": fields,
        "number": str(number),
        "written": before.get("text") or "",
        "seconds": _seconds_given(before),
        "missing": invalid,
    }


def _seconds_given(before):
    """The time already spent on an item, as the page had counted it before it was loaded again
    (a refused submission, a restored MTurk draft), so that task.js adds to it instead of
    starting from nothing; "" when none, or when it is not a number of seconds."""
    seconds = seconds_or_none(before.get("seconds"))
    return "" if seconds is None else f"{seconds:.2f}"


def survey_scales(survey):
    """The questions every item of the survey's page asks, as its kind words them (read once for
    many HITs by a caller)."""
    return kind_for(survey).scales(survey)


def hit_blocks(*, survey, items, previous=None, scales=None, missing=()):
    """Group consecutive items that share a context into one block shown under that conversation.

    Blocks are numbered 1, 2, 3 whatever they hold (a check reads like any other conversation) and
    items 1, 2, 3 across the page; `missing`: ids of items a refused submission left unanswered.
    """
    missing = set(missing)
    aspects = scales if scales is not None else survey_scales(survey)
    kind = kind_for(survey)
    custom = kind.page_blocks(survey=survey, items=items, scales=aspects, previous=previous or {}, missing=missing)
    if custom is not None:
        return custom
    fieldsets = _Fieldsets(kind.choice_template)
    options = kind.block_options(survey)
    blocks = []
    items = list(items)
    texts = _tuple_texts(items)
    for number, item in enumerate(items, start=1):
        if item.kind in (HITItem.Kind.RESPONSE, HITItem.Kind.WRITE, *PAIR_KINDS, *BWS_KINDS):
            key = ("context", item.context_id)
            turns = item.context.turns
        elif item.kind in GOLD_KINDS:
            # A gold reply and its fillers, laid out together under the check's conversation (a
            # HIT shows a check once); a second gold reply starts a block of its own, as the
            # adjacent lone gold items of a HIT laid out before fillers existed did.
            key, turns = ("gold", item.attention_check_id), _gold_turns(survey, item.attention_check.turns)
        elif item.kind == HITItem.Kind.INSTRUCTED_FILLER or not item.asks_main_only:
            # An instruction and its fillers, under the conversation they borrowed (kinds/rating/checks.py).
            key, turns = ("borrowed", item.context_id), item.context.turns
        else:
            key, turns = ("instructed", item.pk), []
        check = item.kind in (HITItem.Kind.GOLD, HITItem.Kind.INSTRUCTED)
        if not blocks or blocks[-1]["key"] != key or (check and blocks[-1]["has_check"]):
            blocks.append(
                {
                    "key": key,
                    "has_check": False,
                    "number": str(len(blocks) + 1),
                    "turns": _turns(turns),
                    "items": [],
                    "write": item.kind == HITItem.Kind.WRITE,
                    **options,
                }
            )
        blocks[-1]["items"].append(
            _item(item, aspects, number, previous or {}, fieldsets, missing=missing, texts=texts)
        )
        blocks[-1]["has_check"] |= check
    for block in blocks:
        del block["key"], block["has_check"]
    return blocks


def fields_count(blocks):
    """How many answers the blocks ask for (the page's progress counter): a write item counts one."""
    return sum(len(item["fields"]) or 1 for block in blocks for item in block["items"])


def items_html(blocks):
    """The blocks as HTML (our own template, all text escaped: safe to mark safe again later)."""
    return render_to_string("annotation/task/_items.html", {"blocks": blocks, "preview": False})
