"""Quality rules of conversation surveys judge every rated question, each on its own scale: a pair
of annotators' kappa is the mean of its kappas per question, flags such as straight-lining are
judged per question, and per-turn yes/no flags get their kappa reported. Figures computed by hand."""

import pytest

from annotation.models import Annotator, Aspect, ConversationRating, ConversationTurn
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.quality import agreement
from annotation.quality.recompute import quality_recompute
from tests.annotation.conversation_study_helpers import make_conversation_survey

# --- the pure combination ----------------------------------------------------------------------


def test_a_pairs_kappa_is_the_mean_of_its_kappas_per_question_each_on_its_scale():
    overall = [("a", i, s) for i, s in enumerate([1, 2, 3, 4])] + [("b", i, s) for i, s in enumerate([1, 2, 3, 5])]
    engaging = [("a", i, s) for i, s in enumerate([0, 1, 2, 2])] + [("b", i, s) for i, s in enumerate([0, 1, 2, 0])]
    pairs, by_question = agreement.stratified_agreement(
        {"overall": (overall, [1, 2, 3, 4, 5]), "engaging": (engaging, [0, 1, 2])}
    )
    # overall: agree on 3 of 4, chance 3 x (1/4 x 1/4) = 3/16: (3/4 - 3/16) / (13/16) = 9/13
    # engaging: agree on 3 of 4, chance 1/4 x 1/2 + 1/4 x 1/4 + 1/2 x 1/4 = 5/16: (7/16) / (11/16) = 7/11
    assert by_question["overall"][0].kappa == pytest.approx(9 / 13)
    assert by_question["engaging"][0].kappa == pytest.approx(7 / 11)
    (pair,) = pairs
    assert (pair.a, pair.b, pair.n, pair.used) == ("a", "b", 8, True)
    assert pair.kappa == pytest.approx((9 / 13 + 7 / 11) / 2)


def test_a_question_where_the_pair_shares_too_few_items_or_no_variation_does_not_count():
    overall = [(w, i, s) for w in "ab" for i, s in enumerate([1, 2, 3, 4, 5])]  # agree on all: kappa 1
    engaging = [(w, i, 2) for w in "ab" for i in range(5)]  # every answer 2: kappa undefined
    flags = [("a", 0, 1), ("b", 0, 0)]  # one shared item, under the overlap
    pairs, _ = agreement.stratified_agreement(
        {"overall": (overall, [1, 2, 3, 4, 5]), "engaging": (engaging, [0, 1, 2]), "x": (flags, [0, 1])},
        min_overlap=2,
    )
    (pair,) = pairs
    assert pair.used and pair.kappa == 1.0 and pair.n == 11
    pairs, _ = agreement.stratified_agreement({"engaging": (engaging, [0, 1, 2])}, min_overlap=2)
    assert not pairs[0].used and pairs[0].kappa is None


# --- the survey's quality report -----------------------------------------------------------------

OVERALL = {  # 12 conversations; a and b vary, c answers 3 everywhere
    "a": [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2],
    "b": [1, 2, 3, 4, 4, 1, 2, 3, 5, 5, 2, 2],
    "c": [3] * 12,
}
ENGAGING = {  # a gives 2 to all but one (straight-lines this question only), c 1 everywhere
    "a": [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1],
    "b": [2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 0, 1],
    "c": [1] * 12,
}
REPETITIVE = {"a": [1, 0, 0, 0], "b": [1, 0, 1, 0]}  # a per-turn flag on four bot turns


@pytest.fixture
def rated(researcher, db):
    survey = make_conversation_survey(researcher, n=6, turns=4, launch=False, min_pair_overlap=5)
    Aspect.objects.filter(survey=survey).exclude(key__in=["overall", "engaging", "repetitive"]).delete()
    Aspect.objects.filter(survey=survey, key="engaging").update(scale_min=0, scale_max=2)
    conversations = list(survey.dataset.conversations.order_by("position"))
    turns = list(
        ConversationTurn.objects.filter(conversation__dataset=survey.dataset, speaker=SYSTEM_SPEAKER).order_by("pk")
    )[:4]
    annotators = {w: Annotator.objects.create(provider="local", worker_id=w) for w in "abc"}
    rows = []
    for worker, annotator in annotators.items():
        for conversation, overall, engaging in zip(conversations, OVERALL[worker], ENGAGING[worker], strict=True):
            common = {"survey": survey, "annotator": annotator, "conversation": conversation, "seconds": 40.0}
            rows += [ConversationRating(**common, aspect="overall", score=overall),
                     ConversationRating(**common, aspect="engaging", score=engaging)]  # fmt: skip
        for turn, flag in zip(turns, REPETITIVE.get(worker, []), strict=False):
            rows.append(ConversationRating(survey=survey, annotator=annotator, conversation=turn.conversation,
                                           turn=turn, aspect="repetitive", score=flag))  # fmt: skip
    ConversationRating.objects.bulk_create(rows)
    return survey, {w: a.pk for w, a in annotators.items()}


def _sklearn_kappa(x, y, labels):
    from sklearn.metrics import cohen_kappa_score

    return cohen_kappa_score(x, y, labels=labels)


def test_the_rules_judge_each_question_on_its_scale_and_combine_them(rated):
    survey, ids = rated
    report = quality_recompute(survey=survey).data
    assert report["aspects"] == ["overall", "engaging"]
    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    label = {entry["annotator_id"]: entry["worker"] for entry in report["annotators"]}
    a, b = sorted([label[ids["a"]], label[ids["b"]]])
    x, y = (OVERALL, ENGAGING)
    first, second = ("a", "b") if label[ids["a"]] == a else ("b", "a")
    per_question = [_sklearn_kappa(x[first], x[second], [1, 2, 3, 4, 5]),
                    _sklearn_kappa(y[first], y[second], [0, 1, 2])]  # fmt: skip
    pair = pairs[(a, b)]
    assert pair["n"] == 24 and pair["used"]
    assert pair["kappa"] == pytest.approx(sum(per_question) / 2)
    rows = {row["aspect"]: row for row in report["aspects_agreement"]}
    assert rows["overall"]["scale"] == [1, 2, 3, 4, 5] and rows["engaging"]["scale"] == [0, 1, 2]
    assert rows["overall"]["n_items"] == 12 and rows["overall"]["n_ratings"] == 36
    # c gave one value everywhere: kappa 0 with anyone who varies, so each question's median is 0
    for question, scores, scale in (("overall", OVERALL, [1, 2, 3, 4, 5]), ("engaging", ENGAGING, [0, 1, 2])):
        kappas = sorted(_sklearn_kappa(scores[u], scores[v], scale) for u, v in ("ab", "ac", "bc"))
        assert kappas[0] == pytest.approx(0) and rows[question]["median_kappa"] == pytest.approx(kappas[1])
    # the headline alpha is overall's alone, on its own scale
    overall_triples = [(w, i, s) for w, scores in OVERALL.items() for i, s in enumerate(scores)]
    assert report["alpha_all"] == pytest.approx(
        agreement.krippendorff_alpha(overall_triples, scale=[1, 2, 3, 4, 5], level="ordinal")
    )
    assert report["n_responses"] == 12  # conversations, not (conversation, question) items
    assert report["time_per_item"]["n"] == 36  # each conversation's seconds counted once per annotator


def test_straight_lining_is_judged_per_question_and_raised_on_most_of_them(rated):
    survey, ids = rated
    integrity = quality_recompute(survey=survey).data["integrity"]
    flags = {w["annotator_id"]: {f["name"]: f for f in w["rating_flags"]} for w in integrity["workers"]}
    # c: 12 of 12 the same answer on both questions (share 1.0 >= 0.9)
    straight = flags[ids["c"]]["straight_lining"]
    assert straight["evidence"]["raised_on_questions"] == "overall, engaging"
    assert straight["evidence"]["questions_judged"] == 2
    assert straight["evidence"]["question"] == "overall" and straight["evidence"]["most_frequent_share"] == 1.0
    # a: 11 of 12 twos on engaging (0.917 >= 0.9) but overall varies: one question of two is not most
    assert "straight_lining" not in flags.get(ids["a"], {})
    assert "straight_lining" not in flags.get(ids["b"], {})


def test_per_turn_flags_get_their_kappa_reported_not_ruled_on(rated):
    survey, _ids = rated
    survey.min_pair_overlap = 4
    survey.save()
    report = quality_recompute(survey=survey).data
    (row,) = report["turn_flags"]
    # a: 1 0 0 0, b: 1 0 1 0; agree on 3 of 4; chance 1/4 x 1/2 + 3/4 x 1/2 = 1/2: (3/4 - 1/2) / (1/2) = 1/2
    assert row["aspect"] == "repetitive" and row["n_turns"] == 4 and row["n_answers"] == 8
    assert row["ticked_share"] == pytest.approx(3 / 8)
    assert row["median_kappa"] == pytest.approx(0.5) and row["n_pairs"] == 1
    assert "repetitive" not in report["aspects"]
