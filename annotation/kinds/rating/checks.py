"""An attention check laid out as a block of the same shape as the real blocks around it.

A real block shows a context and the replies of every selected system to it; a gold check alone
under its conversation was a block of one reply, so an annotator who learnt that "the block with
one reply is the check" could rate carefully there only and click at random elsewhere. So the gold
reply is shown among filler replies, in a block as large as a real block of its HIT, at a position
drawn when the HIT is laid out (recorded as the items' positions, like a pair's sides).

Fillers are real responses of the dataset: the replies to the check's own conversation when the
researcher took it from the dataset (matched by its turns' texts), else the replies to one other
context. Contexts on the same HIT are never borrowed from, or the page would show a reply twice.
Filler answers are asked, required and checked against their scales like any answer, and never
stored (`assignments._validated_rows`): they were given under the check's conversation, which is
not the reply's own (or is, but that context's replies are rated on their own HIT by the survey's
design, and a second rating by the same annotator would break "one rating per response").

An instructed check ("Please choose N for every question about this reply") is laid out the same
way: its instruction is one of the replies, at a drawn position, under a real conversation borrowed
from a context off this HIT whose other replies are its fillers. Alone under no conversation, with
only the main question, it was the block to read while clicking at random elsewhere.
"""

import collections
import math

from annotation.kinds.rating.gold_turns import SPEAKER_SAMPLE, speaker_names, split_speaker, turn_text
from annotation.models import Context, HITItem

# Random draws of a context to borrow fillers from before the candidates are filtered in full.
DRAWS = 20


def _turn_texts(turns, names=None):
    """A conversation as the tuple of its turns' texts, stripped, whatever its speakers' format;
    with `names` (the dataset's speakers), a check's turn written "A: text" counts as "text"."""
    texts = []
    for turn in turns or []:
        text = turn_text(turn)
        if names and not isinstance(turn, dict):
            text = split_speaker(text, names)[1]
        texts.append(" ".join(str(text).split()))
    return tuple(texts)


class CheckBlocks:
    """Lays out the gold and instructed checks of one survey's HITs; built once per layout."""

    def __init__(self, *, survey, by_context):
        self.by_context = by_context
        self.contexts = sorted(by_context)
        self.checks = {check.pk: check for check in survey.attention_checks.all()}
        self.own_context = {}
        if self.checks:
            contexts = Context.objects.filter(dataset=survey.dataset).order_by("position")
            names = speaker_names(
                tuple((turn.get("speaker") or "") if isinstance(turn, dict) else "" for turn in turns or [])
                for turns in contexts.values_list("turns", flat=True)[:SPEAKER_SAMPLE]
            )
            wanted = {_turn_texts(check.turns, names): pk for pk, check in self.checks.items()}
            turns = Context.objects.filter(dataset=survey.dataset).order_by("pk").values_list("pk", "turns")
            for context_id, context_turns in turns.iterator(chunk_size=2000):
                check_id = wanted.get(_turn_texts(context_turns))
                if check_id is not None and context_id in by_context:
                    self.own_context.setdefault(check_id, context_id)

    def members(self, *, check_id, size, on_hit, rng):
        """The block's items as HITItem fields, in the order shown: the gold reply and `size` - 1
        fillers (fewer only when every context with replies is on this HIT)."""
        fillers = self._fillers(check_id, size - 1, set(on_hit), rng)
        members = [{"kind": HITItem.Kind.GOLD, "attention_check_id": check_id}]
        members += [
            {
                "kind": HITItem.Kind.GOLD_FILLER,
                "attention_check_id": check_id,
                "response_id": response_id,
                "context_id": context_id,
            }
            for context_id, response_id in fillers
        ]
        rng.shuffle(members)
        return members

    def instructed_members(self, *, score, size, on_hit, rng):
        """An instructed check's block in the order shown: the instruction and `size` - 1 replies
        to one borrowed context off this HIT (fewer when none has enough), all with that context
        as theirs, since its conversation is shown above them. A lone instruction without a
        context, as before fillers existed, when every context with replies is on this HIT."""
        context_id = self._other_context(size - 1, set(on_hit), rng)
        instruction = {"kind": HITItem.Kind.INSTRUCTED, "instructed_score": score}
        if context_id is None:
            return [instruction]
        replies = self.by_context[context_id]
        members = [{**instruction, "context_id": context_id}]
        members += [
            {"kind": HITItem.Kind.INSTRUCTED_FILLER, "context_id": context_id, "response_id": response_id}
            for response_id in rng.sample(replies, min(size - 1, len(replies)))
        ]
        rng.shuffle(members)
        return members

    def _fillers(self, check_id, need, on_hit, rng):
        picked = []
        own = self.own_context.get(check_id)
        if need > 0 and own is not None and own not in on_hit:
            replies = self.by_context[own]
            picked = [(own, r) for r in rng.sample(replies, min(need, len(replies)))]
        # Another conversation's replies, all from one context where one has enough of them: a
        # mixed bag of replies to several conversations would read unlike a real block.
        tried = {own}
        while len(picked) < need:
            context_id = self._other_context(need - len(picked), on_hit | tried, rng)
            if context_id is None:
                break
            tried.add(context_id)
            replies = self.by_context[context_id]
            picked += [(context_id, r) for r in rng.sample(replies, min(need - len(picked), len(replies)))]
        return picked

    def _other_context(self, need, excluded, rng):
        """A context off this HIT with at least `need` replies, else the one with most; None if none."""
        for _ in range(min(DRAWS, len(self.contexts))):
            context_id = rng.choice(self.contexts)
            if context_id not in excluded and len(self.by_context[context_id]) >= need:
                return context_id
        candidates = [pk for pk in self.contexts if pk not in excluded]
        if not candidates:
            return None
        enough = [pk for pk in candidates if len(self.by_context[pk]) >= need]
        if enough:
            return rng.choice(enough)
        return max(candidates, key=lambda pk: len(self.by_context[pk]))


def check_block_size(*, sizes, by_context, rng):
    """How many replies a check's block shows: the size of one of the HIT's real blocks (drawn, so
    that where sizes differ it is as common as they are), else the survey's most common size."""
    if sizes:
        return rng.choice(sizes)
    counts = collections.Counter(len(replies) for replies in by_context.values())
    return counts.most_common(1)[0][0] if counts else 1


def gold_blocks_per_hit(checks_per_hit):
    """How many of a rating HIT's checks are gold when the survey has gold enough: every other one,
    the first included (hits.hits_generate), so all of one."""
    return math.ceil(checks_per_hit / 2)


def gold_shortfall(*, n_gold, checks_per_hit, hits, max_hits_per_annotator):
    """The researcher's warning ("" for none) when an annotator doing as many tasks as they may would
    meet a gold check twice: fewer gold checks than gold blocks over those tasks (F09). A survey
    without gold checks uses instructed ones only, as designed. (A comparison makes its own gold: its
    kind asks nothing of this.)"""
    if not n_gold or not checks_per_hit or not hits:
        return ""
    tasks = min(max_hits_per_annotator, hits)
    per_hit = gold_blocks_per_hit(checks_per_hit)
    needed = per_hit * tasks
    if n_gold >= needed:
        return ""
    checks = "gold check" if n_gold == 1 else "gold checks"
    return (
        f"{n_gold} {checks} for {needed} gold blocks: an annotator doing {tasks} task{'s' if tasks != 1 else ''} "
        f"meets {per_hit} gold check{'s' if per_hit != 1 else ''} in each, so they would see the same check "
        f"again (and learn it). Give at least {needed} gold checks, or lower Max HITs per annotator."
    )
