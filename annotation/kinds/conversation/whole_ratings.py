"""What a kind whose answers are conversation ratings reads back the same way: the conversation kind
and the live chat kind (whose finished chats are conversations rated as a whole).

Quality rules judge every question on a rating scale, each on its own scale: the whole-conversation
aspects (an item: a conversation) and the per-turn rating aspects (an item: a system turn). Their
rows carry their aspect, and the quality report computes agreement, consensus and straight-lining
per aspect before combining them (`annotation.quality.agreement.strata`). Per-turn yes/no flags
are left out of the rules: most turns are flagged by nobody, so a flag's kappa is low or undefined
for careful annotators too (kappa's prevalence paradox); their kappa per flag is reported beside
them (`quality_extras`), for the researcher to read."""

from django.db.models import Count

from annotation.kinds.conversation.exporting import conversation_ratings_export
from annotation.kinds.conversation.questions import is_flag
from annotation.models import Assignment, ConversationRating
from annotation.quality import agreement

OVERALL = "overall"


class WholeConversationRatings:
    rates_on_a_scale = True  # the headline question's scale
    """Export, answer distribution and quality rows from a survey's `ConversationRating` rows."""

    # The dataset page counts them all: whole-conversation and per-turn ratings and the per-turn yes/no flags
    # (the quality page counts the answers on a rating scale only, and says so).
    dataset_count = ("n_conversation_ratings", "ratings and flags")

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return conversation_ratings_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def answer_distribution(self, *, survey, annotator, scale):
        # Whole-conversation scores only: flags (0/1) would swamp them.
        ratings = ConversationRating.objects.filter(survey=survey, annotator=annotator, turn__isnull=True)
        counts = dict(ratings.order_by().values_list("score").annotate(n=Count("pk")))
        distribution = [(value, counts.get(value, 0)) for value in scale]
        return distribution, sum(counts.values())

    # The rules judge several questions (`quality_aspects`), each on its own scale (`quality_strata`).
    quality_aspect = None
    quality_words = {
        "answers": "Ratings",
        "answers_lower": "ratings",
        "listed": "ratings (every question on a scale)",
        "per_item": "rated conversation",
        "units": "conversations",
        "units_note": ", every question on a rating scale",
        "given": "Whole-conversation scores given",
        "alpha": "ordinal, overall",
    }

    def _rule_aspects(self, survey):
        """The survey's questions on a rating scale (not yes/no flags), overall first."""
        aspects = [a for a in survey.aspects.order_by("position", "pk") if not is_flag(a)]
        return sorted(aspects, key=lambda a: a.key != OVERALL)

    def quality_aspects(self, survey):
        return [a.key for a in self._rule_aspects(survey)] or [OVERALL]

    def quality_strata(self, survey):
        """`{aspect: scale}` of the questions the rules judge, each on its own scale."""
        return {a.key: list(range(a.scale_min, a.scale_max + 1)) for a in self._rule_aspects(survey)}

    def quality_rows(self, survey):
        """Every rating on a rule question as a rating row: the item (`response_id`) is the aspect and
        the conversation ("overall:12") or the system turn ("quality:t40"), so questions never share
        an item; `aspect` names its question, `unit` its conversation. A conversation's seconds sit on
        its first question's row only, so timing counts each conversation once."""
        aspects = self._rule_aspects(survey)
        per_turn = {a.key for a in aspects if a.per_turn}
        whole = [a.key for a in aspects if not a.per_turn]
        rows = (
            ConversationRating.objects.filter(survey=survey, aspect__in=[a.key for a in aspects])
            .exclude(assignment__status=Assignment.Status.REJECTED)
            .order_by("id")
            .values_list("annotator_id", "conversation_id", "turn_id", "aspect", "score", "seconds")
        )
        timed = whole[0] if whole else None
        out = []
        for annotator, conversation, turn, aspect, score, took in rows:
            if (turn is None) == (aspect in per_turn):
                continue  # a per-turn question's answer is on a turn, a whole one's on the conversation
            item = f"{aspect}:{conversation}" if turn is None else f"{aspect}:t{turn}"
            seconds = took if aspect == timed else None
            out.append({"survey_id": survey.pk, "annotator_id": annotator, "response_id": item, "aspect": aspect,
                        "unit": conversation, "score": score, "seconds": seconds})  # fmt: skip
        return out

    def quality_scale(self, survey):
        """The headline question's scale (overall's, else the first rule question's)."""
        strata = self.quality_strata(survey)
        return next(iter(strata.values())) if strata else [1, 2, 3, 4, 5]

    def quality_extras(self, survey):
        return {"turn_flags": turn_flag_agreement(survey)}


def turn_flag_agreement(survey):
    """Per yes/no flag asked on each system turn: turns, answers, the share ticked, the median
    pairwise Cohen's kappa and Krippendorff's alpha (nominal) over turns seen by two annotators or
    more. Reported, not ruled on (module doc). Answers of rejected assignments are left out."""
    flags = [a for a in survey.aspects.order_by("position", "pk") if is_flag(a)]
    rows = (
        ConversationRating.objects.filter(survey=survey, aspect__in=[a.key for a in flags], turn__isnull=False)
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .values_list("aspect", "annotator_id", "turn_id", "score")
    )
    by_flag = {}
    for aspect, annotator, turn, score in rows:
        by_flag.setdefault(aspect, []).append((str(annotator), turn, score))
    out = []
    for flag in flags:
        triples = by_flag.get(flag.key, [])
        pairs = agreement.pairwise_agreement(triples, scale=[0, 1], min_overlap=survey.min_pair_overlap)
        out.append({
            "aspect": flag.key, "question": flag.question, "n_turns": len({t for _, t, _ in triples}),
            "n_answers": len(triples),
            "ticked_share": sum(score for _, _, score in triples) / len(triples) if triples else None,
            "median_kappa": agreement.median_kappa(pairs), "n_pairs": sum(p.used for p in pairs),
            "alpha": agreement.krippendorff_alpha(triples, scale=[0, 1], level="nominal"),
        })  # fmt: skip
    return out
