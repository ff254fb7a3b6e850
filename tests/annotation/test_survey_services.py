import datetime
from collections import Counter
from unittest import mock

import pytest
from django.utils import timezone

from annotation import services
from annotation.crowd import get_provider
from annotation.crowd.base import ProviderError
from annotation.crowd.local import LocalProvider
from annotation.models import (
    Assignment,
    AttentionAnswer,
    HITItem,
    Rating,
    Response,
    ReviewAction,
    Survey,
    WrittenResponse,
)
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db


def test_survey_create_adds_overall_and_extra_aspects(researcher):
    survey = make_survey(researcher, aspects=["topicality", "informativeness"], launch=False)
    assert list(survey.aspects.values_list("key", flat=True)) == ["overall", "topicality", "informativeness"]
    assert survey.status == Survey.Status.DRAFT


def test_survey_create_refuses_unknown_settings_and_systems(researcher):
    with pytest.raises(services.SurveyError, match="Unknown survey setting"):
        make_survey(researcher, contexts_per_hitt=3)
    with pytest.raises(services.SurveyError, match="no system"):
        make_survey(researcher, name="s2", dataset_name="d2", systems=["nope"])


def test_hits_put_all_responses_of_a_context_on_one_hit_with_checks(researcher):
    survey = make_survey(researcher, n_contexts=12, contexts_per_hit=3, attention_checks_per_hit=2, launch=False)
    assert survey.hits.count() == 4
    seen_contexts = Counter()
    for hit in survey.hits.all():
        items = list(hit.items.all())
        kinds = Counter(item.kind for item in items)
        assert kinds == {"response": 12, "instructed": 2, "instr_filler": 6}  # each check a block of four
        contexts = {item.context_id for item in items if item.kind == "response"}
        assert len(contexts) == 3
        for context_id in contexts:
            members = [i.position for i in items if i.context_id == context_id]
            assert members == list(range(members[0], members[0] + 4)), "a context's responses stay together"
        seen_contexts.update(contexts)
        assert hit.assignments.count() == 2
    assert len(seen_contexts) == 12 and set(seen_contexts.values()) == {1}


def test_hit_response_order_is_shuffled_but_seeded(researcher):
    survey = make_survey(researcher, n_contexts=12, launch=False)
    order = [list(h.items.values_list("response__system__name", flat=True)) for h in survey.hits.all()]
    services.hits_generate(survey=survey)
    again = [list(h.items.values_list("response__system__name", flat=True)) for h in survey.hits.all()]
    assert order == again
    per_context = {tuple(o[i : i + 4]) for o in order for i in range(0, len(o), 4) if None not in o[i : i + 4]}
    assert len(per_context) > 1, "systems are not always shown in the same order"


def test_gold_checks_are_used_when_defined(researcher):
    gold = [{"turns": ["Is the sky green?"], "response_text": "No, it is blue.", "accepted_scores": [4, 5]}]
    survey = make_survey(researcher, gold_checks=gold, attention_checks_per_hit=2, launch=False)
    for hit in survey.hits.all():
        assert Counter(hit.items.values_list("kind", flat=True))["gold"] == 1
        assert Counter(hit.items.values_list("kind", flat=True))["instructed"] == 1


def test_overlap_contexts_are_in_every_annotators_work_once(researcher):
    survey = make_survey(researcher, n_contexts=11, contexts_per_hit=3, overlap_contexts=2, assignments_per_hit=2)
    overlap = set(HITItem.objects.filter(hit__survey=survey, is_overlap=True).values_list("response_id", flat=True))
    assert len(overlap) == 8
    for worker in ("w1", "w2"):
        for _ in range(2):
            assignment = services.assignment_claim(survey=survey, worker_id=worker)
            services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
        rated = list(
            Rating.objects.filter(survey=survey, annotator__worker_id=worker).values_list("response_id", flat=True)
        )
        assert overlap <= set(rated)
        assert len(rated) == len(set(rated)), "no response is rated twice"
        assert len(rated) == 8 + 2 * 12


def test_claim_never_gives_a_hit_twice_and_respects_the_cap(researcher):
    survey = make_survey(researcher, n_contexts=12, contexts_per_hit=3, max_hits_per_annotator=2)
    first = services.assignment_claim(survey=survey, worker_id="w1")
    assert services.assignment_claim(survey=survey, worker_id="w1") == first, "the current assignment is resumed"
    services.assignment_submit(assignment=first, answers=good_answers(first))
    second = services.assignment_claim(survey=survey, worker_id="w1")
    assert second.hit_id != first.hit_id
    services.assignment_submit(assignment=second, answers=good_answers(second))
    with pytest.raises(services.NoWorkAvailable, match="maximum of 2"):
        services.assignment_claim(survey=survey, worker_id="w1")


def test_claim_hands_each_slot_to_one_annotator_until_work_runs_out(researcher):
    survey = make_survey(researcher, n_contexts=6, contexts_per_hit=3, assignments_per_hit=2)
    taken = [services.assignment_claim(survey=survey, worker_id=f"w{i}") for i in range(4)]
    assert len({a.pk for a in taken}) == 4
    with pytest.raises(services.NoWorkAvailable):
        services.assignment_claim(survey=survey, worker_id="w9")


def test_claim_refuses_when_the_survey_is_not_live(researcher):
    survey = make_survey(researcher, launch=False)
    with pytest.raises(services.NoWorkAvailable, match="not accepting"):
        services.assignment_claim(survey=survey, worker_id="w1")
    survey = services.survey_launch(survey=survey)
    held = services.assignment_claim(survey=survey, worker_id="w1")
    services.survey_pause(survey=survey)
    with pytest.raises(services.NoWorkAvailable, match="not accepting"):
        services.assignment_claim(survey=survey, worker_id="w2")
    assert services.assignment_claim(survey=survey, worker_id="w1") == held, "a held HIT can be finished"
    assert services.assignment_submit(assignment=held, answers=good_answers(held)).ratings == 12
    services.survey_close(survey=survey)
    with pytest.raises(services.NoWorkAvailable, match="not accepting"):
        services.assignment_claim(survey=survey, worker_id="w1")


def test_submit_stores_every_rating_once_and_replay_changes_nothing(researcher):
    survey = make_survey(researcher, aspects=["topicality"])
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment, score=4)
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.ratings == 3 * 4 * 2 and not result.replayed and result.checks_failed == 0
    again = services.assignment_submit(assignment=assignment, answers=answers)
    assert again.replayed and again.ratings == result.ratings
    assert Rating.objects.filter(survey=survey).count() == 24
    assert set(Rating.objects.values_list("score", flat=True)) == {4}
    assert all(r.seconds == 4.0 for r in Rating.objects.all())


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda a: a.update({999999: {"scores": {"overall": 3}}}), "1 item that this task does not show"),
        (lambda a: a.pop(next(iter(a))), "answer every item"),
        (lambda a: next(v for v in a.values() if "overall" in v["scores"])["scores"].update(overall=6), "outside"),
        (
            lambda a: next(v for v in a.values() if "overall" in v["scores"])["scores"].update(overall="x"),
            "not a score",
        ),
    ],
)
def test_tampered_submissions_are_refused_and_store_nothing(researcher, tamper, message):
    survey = make_survey(researcher)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    tamper(answers)
    with pytest.raises(services.SubmissionRefused, match=message):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert Rating.objects.count() == 0 and AttentionAnswer.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ACTIVE


def test_submit_refuses_another_annotators_assignment_and_wrong_token(researcher):
    survey = make_survey(researcher)
    mine = services.assignment_claim(survey=survey, worker_id="w1")
    other = services.annotator_get(worker_id="w2", provider="local")
    with pytest.raises(services.SubmissionRefused, match="another annotator"):
        services.assignment_submit(assignment=mine, answers=good_answers(mine), annotator=other)
    with pytest.raises(services.SubmissionRefused, match="does not belong"):
        services.assignment_submit(assignment=mine, answers=good_answers(mine), token="forged")
    assert Rating.objects.count() == 0


def test_expired_assignment_returns_to_the_pool_and_refuses_late_submission(researcher):
    survey = make_survey(researcher, assignment_minutes=30)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    later = timezone.now() + datetime.timedelta(minutes=31)
    with pytest.raises(services.SubmissionRefused, match="expired"):
        services.assignment_submit(assignment=assignment, answers=answers, now=later)
    old_token = assignment.token
    assert services.assignments_expire(now=later) == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.OPEN and assignment.annotator is None
    assert assignment.token != old_token
    with pytest.raises(services.SubmissionRefused, match="no longer yours"):
        services.assignment_submit(assignment=assignment, answers=answers)
    reclaimed = services.assignment_claim(survey=survey, worker_id="w2")
    assert reclaimed.pk == assignment.pk
    assert Rating.objects.count() == 0


def test_a_crash_mid_submit_leaves_nothing_stored(researcher):
    survey = make_survey(researcher)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    with (
        mock.patch.object(AttentionAnswer.objects, "bulk_create", side_effect=RuntimeError("power cut")),
        pytest.raises(RuntimeError),
    ):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert Rating.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ACTIVE
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.ratings == 12 and Rating.objects.count() == 12


@pytest.mark.parametrize(
    ("policy", "status", "excluded"),
    [("flag", "submitted", False), ("exclude", "submitted", True), ("reject", "rejected", False)],
)
def test_failed_attention_check_applies_the_policy(researcher, policy, status, excluded):
    survey = make_survey(researcher, attention_policy=policy)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    check = HITItem.objects.get(hit=assignment.hit, kind="instructed")
    answers[check.pk]["scores"]["overall"] = 3 if check.instructed_score != 3 else 1
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.checks_failed == 1 and result.flagged and result.status == status
    assert ReviewAction.objects.filter(action="exclude", annotator=assignment.annotator).exists() == excluded
    assert Rating.objects.count() == 12, "the ratings are kept; the policy decides whether they count"


def test_written_responses_become_responses_of_the_named_system_once_accepted(researcher):
    survey = make_survey(researcher, n_contexts=3, task_type="write", write_system_name="crowd", assignments_per_hit=1)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    services.assignment_submit(assignment=assignment, answers=answers)
    written = list(WrittenResponse.objects.order_by("pk"))
    assert len(written) == 3 and all(w.status == "pending" for w in written)
    services.written_response_review(written=written[0], accept=True, actor=researcher)
    services.written_response_review(written=written[1], accept=False, actor=researcher, reason="off topic")
    made = Response.objects.get(system__name="crowd")
    assert made.text == written[0].text and made.context_id == written[0].context_id
    assert ReviewAction.objects.filter(action="accept_written", actor=researcher).count() == 1
    with pytest.raises(services.ReviewError):
        services.written_response_review(written=written[0], accept=True, actor=researcher)


def test_review_actions_keep_an_audit_trail(researcher):
    survey = make_survey(researcher)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    with pytest.raises(services.ReviewError, match="reason"):
        services.assignment_review(assignment=assignment, action="reject", actor=researcher, reason="")
    services.assignment_review(assignment=assignment, action="reject", actor=researcher, reason="copy-paste")
    assignment.refresh_from_db()
    assert assignment.status == "rejected"
    services.annotator_exclude(survey=survey, annotator=assignment.annotator, actor=researcher, reason="spam")
    trail = list(ReviewAction.objects.filter(survey=survey).values_list("action", "actor__username", "reason"))
    assert ("reject", "alice", "copy-paste") in trail and ("exclude", "alice", "spam") in trail


def test_an_annotators_own_expired_hit_is_returned_when_they_come_back(researcher):
    survey = make_survey(researcher, assignment_minutes=10)
    first = services.assignment_claim(survey=survey, worker_id="w1")
    later = timezone.now() + datetime.timedelta(minutes=11)
    again = services.assignment_claim(survey=survey, worker_id="w1", now=later)
    first.refresh_from_db()
    assert again.status == "active" and again.expires_at > later
    assert Assignment.objects.filter(hit__survey=survey, annotator__worker_id="w1").count() == 1
    assert first.pk == again.pk or first.status == "open"


def test_blocked_annotators_get_no_more_work(researcher):
    survey = make_survey(researcher)
    annotator = services.annotator_get(worker_id="spammer", provider="local")
    get_provider(survey).block(annotator=annotator, reason="bot")
    with pytest.raises(services.NoWorkAvailable):
        services.assignment_claim(survey=survey, worker_id="spammer")
    assert services.assignment_claim(survey=survey, worker_id="honest").annotator.worker_id == "honest"


def test_a_block_keeps_the_annotator_out_of_the_blocking_researchers_surveys_only(researcher, other_researcher):
    mine = make_survey(researcher, name="mine")
    theirs = make_survey(other_researcher, name="theirs")
    annotator = services.annotator_get(worker_id="careless-1", provider="local")
    get_provider(mine).block(annotator=annotator, reason="random answers", owner=researcher)
    with pytest.raises(services.NoWorkAvailable):
        services.assignment_claim(survey=mine, worker_id="careless-1")
    assert services.assignment_claim(survey=theirs, worker_id="careless-1").annotator == annotator
    # a block with no owner (an admin's) applies to every researcher's surveys
    get_provider(mine).block(annotator=services.annotator_get(worker_id="bot", provider="local"), reason="bot")
    for survey in (mine, theirs):
        with pytest.raises(services.NoWorkAvailable):
            services.assignment_claim(survey=survey, worker_id="bot")


def test_unknown_provider_is_refused_clearly(researcher):
    survey = make_survey(researcher, launch=False)
    survey.provider = "carrier-pigeon"
    with pytest.raises(ProviderError, match="carrier-pigeon"):
        get_provider(survey)
    assert isinstance(get_provider(make_survey(researcher, name="s2", launch=False)), LocalProvider)


def test_claim_can_be_pinned_to_one_hit(researcher):
    survey = make_survey(researcher, n_contexts=12, contexts_per_hit=3, assignments_per_hit=1)
    last = survey.hits.order_by("position").last()
    assignment = services.assignment_claim(survey=survey, worker_id="turker", provider="mturk", hit=last)
    assert assignment.hit == last and assignment.annotator.provider == "mturk"
    with pytest.raises(services.NoWorkAvailable):
        services.assignment_claim(survey=survey, worker_id="other", hit=last)


def test_each_task_type_gets_instructions_of_its_own_unless_the_researcher_wrote_some(researcher):
    rating = make_survey(researcher, name="r", launch=False)
    write = make_survey(researcher, name="w", launch=False, task_type="write", write_system_name="crowd")
    pairs = make_survey(researcher, name="p", launch=False, task_type="pairwise")
    assert "judge how appropriate" in rating.instructions
    # a write task asks for a reply; it has no candidate replies to judge and no attention checks
    assert "write the next turn" in write.instructions
    assert "judge" not in write.instructions and "attention" not in write.instructions
    assert "reply 1 and reply 2" in pairs.instructions
    own = make_survey(
        researcher, name="own", launch=False, task_type="write", write_system_name="crowd", instructions="Be kind."
    )
    assert own.instructions == "Be kind."
