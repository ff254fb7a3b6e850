"""What the annotator page shows for one HIT: blocks of conversation turns with items to judge.

Shared by the local task page and the Mechanical Turk frame, which render the same include
(templates/annotation/task/_items.html). Only texts and HITItem ids reach the page: never system
names, response ids or references.
"""

import hashlib

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from annotation.models import Aspect, HITItem
from annotation.services import assignment_items

ITEMS_CACHE_SECONDS = 600
INSTRUCTED_TEXT = "This is an attention check, not a real reply. Please choose {score} for this item."


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


# Where a scale's fragment takes the item id. Escaped text never holds a bare "<", so the marker
# can only match the places the fragment template put it.
ITEM_MARK = mark_safe("<ITEM>")


class _Fieldsets:
    """Each scale's fieldset rendered once per selected value, then copied per item with its id."""

    def __init__(self):
        self.rendered = {}

    def html(self, scale, item_id, selected):
        key = (scale["key"], selected)
        if key not in self.rendered:
            context = {"field": scale, "selected": selected, "item_id": ITEM_MARK}
            self.rendered[key] = render_to_string("annotation/task/_scale.html", context).rstrip("\n")
        return mark_safe(self.rendered[key].replace(ITEM_MARK, str(item_id)))


def _item(item, aspects, number, previous, fieldsets):
    if item.kind == HITItem.Kind.RESPONSE:
        text, scales = item.response.text, aspects
    elif item.kind == HITItem.Kind.GOLD:
        text, scales = item.attention_check.response_text, aspects[:1]
    elif item.kind == HITItem.Kind.INSTRUCTED:
        text, scales = INSTRUCTED_TEXT.format(score=item.instructed_score), aspects[:1]
    else:
        text, scales = "", []
    before = previous.get(item.pk, {})
    fields = []
    for scale in scales:
        selected = str(before.get("scores", {}).get(scale["key"], ""))
        fields.append(
            {
                "key": scale["key"],
                "name": f"score-{item.pk}-{scale['key']}",
                "html": fieldsets.html(scale, item.pk, selected),
            }
        )
    # Numbers go to the template as text: every integer it prints passes through number
    # localisation, which on a 20-item page cost more than the rest of the rendering together.
    return {
        "id": str(item.pk),
        "kind": item.kind,
        "text": text,
        "fields": fields,
        "number": str(number),
        "written": before.get("text") or "",
    }


def _aspects(survey):
    aspects = []
    # Ordered here: the model's default order would join the survey to sort by it, for one survey.
    for aspect in survey.aspects.order_by("position"):
        labels = aspect.scale_labels or {}
        aspects.append(
            {
                "key": aspect.key,
                "question": aspect.question,
                # Values as text: they are compared with submitted ones and printed, never computed with.
                "choices": [{"value": str(v), "label": labels.get(str(v), "")} for v in aspect.values],
                "low": labels.get(str(aspect.scale_min), ""),
                "high": labels.get(str(aspect.scale_max), ""),
            }
        )
    aspects.sort(key=lambda a: a["key"] != Aspect.OVERALL)
    return aspects


def hit_blocks(*, survey, items, previous=None):
    """Group consecutive items that share a context into one block shown under that conversation."""
    aspects = _aspects(survey)
    fieldsets = _Fieldsets()
    blocks = []
    for number, item in enumerate(items, start=1):
        if item.kind in (HITItem.Kind.RESPONSE, HITItem.Kind.WRITE):
            key = ("context", item.context_id)
            turns = item.context.turns
        elif item.kind == HITItem.Kind.GOLD:
            key, turns = ("gold", item.pk), item.attention_check.turns
        else:
            key, turns = ("instructed", item.pk), []
        if not blocks or blocks[-1]["key"] != key:
            blocks.append(
                {
                    "key": key,
                    "number": str(len(blocks) + 1),
                    "turns": _turns(turns),
                    "items": [],
                    "write": item.kind == HITItem.Kind.WRITE,
                }
            )
        blocks[-1]["items"].append(_item(item, aspects, number, previous or {}, fieldsets))
    for block in blocks:
        del block["key"]
    return blocks


def _items_cache_key(survey, hit, items=None):
    # The survey's random token and the HIT's creation time keep a key from ever meaning another
    # HIT, even where a database reuses the ids of deleted rows (SQLite). `items` None: all of them.
    shown = "all" if items is None else hashlib.sha1(",".join(str(item.pk) for item in items).encode()).hexdigest()
    return f"annotation:hit-items:{survey.token}:{hit.pk}:{hit.created_at.timestamp()}:{shown}"


def _from_cache(context, key):
    """Fill `context` from the item HTML cached under `key`; whether there was any."""
    cached = cache.get(key)
    if cached:
        context.update(items_html=mark_safe(cached["html"]), n_fields=cached["n_fields"], n_items=cached["n_items"])
    return bool(cached)


def task_context(
    *, survey, assignment=None, hit=None, preview=False, submit_url="", progress=None, previous=None, error=""
):
    """Template context for templates/annotation/task/hit.html (and the _items.html include).

    A HIT's items never change once annotators have started on it, so a blank page's item HTML is
    cached per (HIT, items shown): the radio loops are most of the page's cost, and under load every
    annotator of a HIT would otherwise render the same HTML again. A HIT without overlap items
    shows every annotator all its items; its HTML is kept under an "all" key that is looked up
    before the items are read, so a cached page reads no items at all. Pages with answers to keep
    (after a refused submission) and previews are rendered afresh.
    """
    context = {
        "survey": survey,
        "assignment": assignment,
        "preview": preview,
        "submit_url": submit_url,
        "progress": progress,
        "write_task": survey.task_type == "write",
        "error": error,
        "items_html": None,
    }
    cacheable = assignment is not None and not previous and not preview
    if cacheable and _from_cache(context, _items_cache_key(survey, assignment.hit)):
        return context
    # By position alone: the default order (hit, position) joins the HIT and its survey to sort one HIT.
    hit_items = list(
        (hit or assignment.hit).items.select_related("context", "response", "attention_check").order_by("position")
    )
    items = hit_items if assignment is None else assignment_items(assignment=assignment, hit_items=hit_items)
    cache_key = None
    if cacheable:
        # Only a HIT without overlap items looks the same to every annotator.
        whole = not any(item.is_overlap for item in hit_items)
        cache_key = _items_cache_key(survey, assignment.hit, None if whole else items)
        if not whole and _from_cache(context, cache_key):  # a whole HIT's key was looked up above
            return context
    blocks = hit_blocks(survey=survey, items=items, previous=previous)
    n_fields = sum(len(item["fields"]) or 1 for block in blocks for item in block["items"])
    context.update(blocks=blocks, n_fields=n_fields, n_items=len(items))
    if cache_key:
        # Rendered by our own template from escaped values, so it is safe to mark safe on the way back.
        html = render_to_string("annotation/task/_items.html", {"blocks": blocks, "preview": False})
        cache.set(cache_key, {"html": html, "n_fields": n_fields, "n_items": len(items)}, ITEMS_CACHE_SECONDS)
        context["items_html"] = mark_safe(html)
    return context
