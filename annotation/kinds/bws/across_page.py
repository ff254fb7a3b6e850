"""The page of a best-worst survey whose sets cross contexts: one block per set, each reply under its
own conversation (the shared layout shows one conversation per block). A gold set's broken reply is
shown under the conversation its item keeps, as any other reply. The replies, fields and messages
are those of a per-context set (`task_page.items`), so the page's script and the submit path read
them alike."""

from annotation.models import HITItem, Response

# The per-context set's own helpers: the same replies, fields and messages on both layouts.
from annotation.views.task_page.items import BWS_KINDS
from annotation.views.task_page.items import _Fieldsets as Fieldsets
from annotation.views.task_page.items import _tuple_item as tuple_item
from annotation.views.task_page.items import _turns as turns_shown

BLOCK_TEMPLATE = "annotation/kinds/bws/_across_block.html"
CHOICE_TEMPLATE = "annotation/kinds/bws/_choice.html"


def across_blocks(*, survey, items, scales, previous, missing):
    items = [item for item in items if item.kind in BWS_KINDS]
    ids = {pk for item in items for pk in item.tuple_responses if pk}
    rows = Response.with_references.filter(pk__in=ids).values_list("pk", "text", "context__turns")
    texts = {pk: text for pk, text, _ in rows}
    turns_of = {pk: turns for pk, _, turns in rows}
    fieldsets = Fieldsets(CHOICE_TEMPLATE)
    blocks = []
    for number, item in enumerate(items, start=1):
        shown = tuple_item(item, scales, number, previous, fieldsets, missing=missing, texts=texts)
        for reply, pk in zip(shown["replies"], item.tuple_responses, strict=True):
            raw = item.context.turns if pk is None and item.kind == HITItem.Kind.BWS_GOLD else turns_of.get(pk)
            reply["turns"] = turns_shown(raw)
        blocks.append({"template": BLOCK_TEMPLATE, "number": str(number), "items": [shown]})
    return blocks
