"""Laying a conversation survey out as HITs: `contexts_per_hit` conversations per HIT, each shown
whole, in a seeded order, and `attention_checks_per_hit` gold conversations.

A HIT also holds at most `TURN_BUDGET` times the turns of that many conversations of average length
(`chunk_by_turns`): conversations vary in length (DSTC9's from 4 to 272 turns), and six long ones
on one page made it 200 KB and more (every bot turn carries its flags), a long read and a heavy
page on a phone. A HIT then closes early; a conversation longer than the budget has a HIT alone.

A gold conversation is a real conversation of the dataset, from another HIT (its annotators never
read the original beside it), with one later system turn replaced by an earlier system turn of the
same conversation, word for word: a repetition a careful annotator flags ("repeats itself"), as
ParlAI's model-chat checks plant one. It is never first on a HIT (a check after real items is
harder to spot). A dataset whose conversations hold fewer than two system turns has none to plant
in, and its HITs get no gold conversation.
"""

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.models import HIT, Conversation, ConversationAspect, ConversationTurn, HITItem
from annotation.models.conversations import SYSTEM_SPEAKER


def survey_conversations(survey):
    """Ids of the survey's conversations (of its chosen systems, else all), in dataset order."""
    conversations = Conversation.objects.filter(dataset_id=survey.dataset_id)
    systems = list(survey.systems.values_list("pk", flat=True)) if survey.pk else []
    if systems:
        conversations = conversations.filter(system_id__in=systems)
    return list(conversations.order_by("position").values_list("pk", flat=True))


TURN_BUDGET = 1.1  # times a HIT's share of the survey's turns: its turns at most


def turn_counts(conversation_ids):
    """`{conversation id: its number of turns}`."""
    from django.db.models import Count

    rows = ConversationTurn.objects.filter(conversation_id__in=conversation_ids).order_by()
    return dict(rows.values("conversation_id").annotate(n=Count("pk")).values_list("conversation_id", "n"))


def chunk_by_turns(units, turns_of, size):
    """`units` (in order) in chunks of at most `size`, each holding at most `TURN_BUDGET` times
    `size` average units' turns (`turns_of(unit)`), a unit over that budget alone."""
    if not units:
        return []
    budget = TURN_BUDGET * size * sum(turns_of(unit) for unit in units) / len(units)
    chunks, current, load = [], [], 0
    for unit in units:
        turns = turns_of(unit)
        if current and (len(current) == size or load + turns > budget):
            chunks.append(current)
            current, load = [], 0
        current.append(unit)
        load += turns
    chunks.append(current)
    return chunks


def system_turns(conversation_ids):
    """`{conversation id: [(index, text), ...]}` of the system turns, in order."""
    turns = {}
    rows = ConversationTurn.objects.filter(conversation_id__in=conversation_ids, speaker=SYSTEM_SPEAKER)
    for conversation_id, index, text in rows.order_by("conversation_id", "index").values_list(
        "conversation_id", "index", "text"
    ):
        turns.setdefault(conversation_id, []).append((index, text))
    return turns


def planted_repetition(turns, rng):
    """`(index, text)`: a later system turn to replace by an earlier one's text, or None when the
    conversation has no two distinct system turns to do it with."""
    candidates = [
        (later, earlier_text)
        for n, (later, later_text) in enumerate(turns)
        for earlier, earlier_text in turns[:n]
        if earlier_text.strip() and earlier_text.strip() != later_text.strip()
    ]
    return rng.choice(candidates) if candidates else None


def dataset_scales_agree(survey):
    """Give the dataset a scale (ConversationAspect) for each of the survey's questions it lacks;
    HITLayoutError when one it has differs: scores on two scales under one name cannot be averaged
    (the rule the ratings import keeps)."""
    stored = {
        key: (low, high)
        for key, low, high in ConversationAspect.objects.filter(dataset_id=survey.dataset_id).values_list(
            "key", "scale_min", "scale_max"
        )
    }
    for aspect in survey.aspects.order_by("position"):
        scale = (aspect.scale_min, aspect.scale_max)
        if stored.get(aspect.key, scale) != scale:
            low, high = stored[aspect.key]
            raise HITLayoutError(
                f"The dataset rates {aspect.key!r} on {low}-{high}; this survey asks it on {scale[0]}-{scale[1]}. "
                "Use the dataset's scale or another name."
            )
        if aspect.key not in stored:
            ConversationAspect.objects.create(
                dataset_id=survey.dataset_id, key=aspect.key, scale_min=scale[0], scale_max=scale[1]
            )


def conversation_layout(*, survey, contexts=()):
    """The survey's HITs and items (`contexts`, the dataset's contexts, are not read: conversations are)."""
    conversations = survey_conversations(survey)
    if not conversations:
        raise HITLayoutError(f"Dataset {survey.dataset.name!r} has no conversations to rate.")
    dataset_scales_agree(survey)
    rng = seeded_rng(survey, "layout")
    order = list(conversations)
    rng.shuffle(order)
    counts = turn_counts(conversations)
    chunks = chunk_by_turns(order, lambda pk: counts.get(pk, 0), survey.contexts_per_hit)
    turns = system_turns(conversations) if survey.attention_checks_per_hit else {}
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items = []
    for hit, chunk in zip(hits, chunks, strict=True):
        hit_rng = seeded_rng(survey, f"hit{hit.position}")
        members = [{"kind": HITItem.Kind.CONVERSATION, "conversation_id": pk} for pk in chunk]
        n_checks = survey.attention_checks_per_hit
        golds = _golds(chunk=chunk, conversations=conversations, turns=turns, n=n_checks, rng=hit_rng, counts=counts)
        for gold in golds:
            members.insert(hit_rng.randint(1, len(members)), gold)
        items += [HITItem(hit=hit, position=position, **member) for position, member in enumerate(members)]
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits


def _golds(*, chunk, conversations, turns, n, rng, counts=None):
    """Up to `n` gold conversations from conversations off this HIT (from any, in a one-HIT survey),
    of no more than average length where there are such (`counts`: turns per conversation): a long
    one would make the page heavy and its check stand out as the long read."""
    on_hit = set(chunk)
    pool = [pk for pk in conversations if pk not in on_hit] or list(conversations)
    if counts:
        mean = sum(counts.values()) / len(counts)
        pool = [pk for pk in pool if counts.get(pk, 0) <= mean] or pool
    rng.shuffle(pool)
    golds = []
    for pk in pool:
        if len(golds) == n:
            break
        planted = planted_repetition(turns.get(pk, []), rng)
        if planted:
            index, text = planted
            golds.append(
                {"kind": HITItem.Kind.CONV_GOLD, "conversation_id": pk, "planted_turn": index, "broken_text": text}
            )
    return golds
