"""Laying a chat survey out: one HIT per conversation to be had, `conversations_per_system` for each
chat system, in a seeded order that goes round the systems (every run of as many HITs as systems
holds each once), so annotators claiming HITs in turn meet the systems equally often. Each HIT has
one item (the chat) and a ChatHIT naming its system; the dataset gets a System of each chat system's
name, which its conversations belong to."""

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.conversation.layout import dataset_scales_agree
from annotation.models import HIT, ChatHIT, HITItem, System


def dataset_system(survey, chat_system):
    """The dataset System the chat system's conversations join (made on first use)."""
    system, _ = System.objects.get_or_create(dataset_id=survey.dataset_id, name=chat_system.name)
    return system


def chat_layout(*, survey):
    settings = getattr(survey, "chat_settings", None)
    chat_systems = list(settings.chat_systems.order_by("name")) if settings else []
    if not chat_systems:
        raise HITLayoutError("A chat survey needs at least one chat system.")
    dataset_scales_agree(survey)
    systems = {cs.pk: dataset_system(survey, cs) for cs in chat_systems}
    survey.systems.set(systems.values())
    rng = seeded_rng(survey, "layout")
    order = []
    for _ in range(settings.conversations_per_system):
        rnd = list(chat_systems)
        rng.shuffle(rnd)
        order += rnd
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(order)))
    HITItem.objects.bulk_create(HITItem(hit=hit, position=0, kind=HITItem.Kind.CHAT) for hit in hits)
    ChatHIT.objects.bulk_create(
        ChatHIT(hit=hit, chat_system=cs, system=systems[cs.pk]) for hit, cs in zip(hits, order, strict=True)
    )
    return hits
