"""The conversation kind (issue 37): a survey over a dataset's conversations, laid out as HITs with
gold conversations, shown blind, submitted and stored per survey as conversation ratings."""

import io

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from annotation import services
from annotation.kinds.conversation.questions import TURN_FLAGS, WHOLE_ASPECTS
from annotation.kinds.registry import kind_for
from annotation.models import (
    Assignment,
    AttentionAnswer,
    Conversation,
    ConversationAspect,
    ConversationRating,
    ConversationTurn,
    HITItem,
    Survey,
)
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.conversation_answers import conversation_ratings_import
from annotation.views.task_page.display import task_context
from annotation.views.task_page.facts import _facts
from tests.annotation.conversation_study_helpers import (
    SYSTEMS,
    claimed,
    conversation_answers,
    make_conversation_survey,
)
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def test_a_new_conversation_survey_asks_fed_aspects_of_the_whole_and_parlai_flags_of_each_turn(researcher):
    survey = make_conversation_survey(researcher, launch=False)
    whole = list(survey.aspects.filter(per_turn=False).order_by("position").values_list("key", flat=True))
    flags = list(survey.aspects.filter(per_turn=True).values_list("key", "scale_min", "scale_max"))
    assert whole == [key for key, *_ in WHOLE_ASPECTS]
    assert flags == [(key, 0, 1) for key, _ in TURN_FLAGS]
    overall = survey.aspects.get(key="overall")
    assert overall.scale_labels == {"1": "Very poor", "5": "Excellent"}


def test_conversations_are_laid_out_per_hit_with_a_planted_repetition_from_another_hit(researcher):
    survey = make_conversation_survey(researcher, n=6, launch=False)  # 12 conversations, 3 a HIT
    assert survey.hits.count() == 4
    real = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.CONVERSATION)
    assert sorted(real.values_list("conversation_id", flat=True)) == sorted(
        Conversation.objects.filter(dataset=survey.dataset).values_list("pk", flat=True)
    ), "every conversation once"
    for gold in HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.CONV_GOLD):
        on_hit = set(real.filter(hit=gold.hit).values_list("conversation_id", flat=True))
        assert gold.conversation_id not in on_hit, "the original is not read beside its copy"
        assert gold.position > 0, "a check is never first"
        bot = dict(
            ConversationTurn.objects.filter(conversation=gold.conversation, speaker=SYSTEM_SPEAKER).values_list(
                "index", "text"
            )
        )
        earlier = [text for index, text in bot.items() if index < gold.planted_turn]
        assert gold.planted_turn in bot and gold.broken_text in earlier, "a later bot turn repeats an earlier one"


def test_a_survey_over_a_dataset_without_conversations_is_refused(researcher):
    with pytest.raises(services.SurveyError, match="no conversations"):
        make_survey(researcher, task_type="conversation")


def test_the_page_shows_turns_blind_with_flags_under_bot_turns_only(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    context = task_context(survey=survey, assignment=assignment)
    html = str(context["items_html"])
    for name in (*SYSTEMS, "topic-", "meena-0"):
        assert name not in html, f"{name!r} would unblind the study"
    items = services.assignment_items(assignment=assignment)
    gold = next(item for item in items if item.kind == HITItem.Kind.CONV_GOLD)
    assert html.count(gold.broken_text) == 2, "the planted turn shows the repeated text, as its original does"
    bot_turns = sum(
        ConversationTurn.objects.filter(conversation_id=item.conversation_id, speaker=SYSTEM_SPEAKER).count()
        for item in items
    )
    assert html.count('type="checkbox"') == bot_turns * len(TURN_FLAGS)
    assert context["n_fields"] == len(items) * len(WHOLE_ASPECTS)


def test_a_submission_is_stored_per_survey_with_every_flag_of_every_bot_turn(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    answers = conversation_answers(assignment, score=4)
    real = [i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.CONVERSATION]
    flagged_turn = ConversationTurn.objects.filter(conversation_id=real[0].conversation_id, speaker="system").first()
    answers[real[0].pk]["scores"][f"t{flagged_turn.index}-off-topic"] = "on"
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert (result.checks_passed, result.checks_failed) == (1, 0)
    rows = ConversationRating.objects.filter(survey=survey, assignment=assignment)
    whole = rows.filter(turn=None)
    assert whole.count() == len(real) * len(WHOLE_ASPECTS) and set(whole.values_list("score", flat=True)) == {4}
    assert whole.first().seconds == 30.0
    bot_turns = ConversationTurn.objects.filter(conversation__in=[i.conversation_id for i in real], speaker="system")
    assert rows.exclude(turn=None).count() == bot_turns.count() * len(TURN_FLAGS)
    assert list(rows.filter(score=1, turn__isnull=False).values_list("turn_id", "aspect")) == [
        (flagged_turn.pk, "off-topic")
    ]
    assert result.ratings == rows.count()
    assert services.assignment_submit(assignment=assignment, answers=answers).replayed


def test_a_missed_plant_fails_the_gold_conversation_and_so_does_flagging_every_turn(researcher):
    survey = make_conversation_survey(researcher, assignments_per_hit=3, turns=10)  # 5 bot turns each
    first = claimed(survey, "careless")
    result = services.assignment_submit(assignment=first, answers=conversation_answers(first, flag_plants=False))
    assert result.checks_failed == 1 and Assignment.objects.get(pk=first.pk).flagged
    second = claimed(survey, "ticks-everything")
    answers = conversation_answers(second)
    for item in services.assignment_items(assignment=second):
        for index in ConversationTurn.objects.filter(
            conversation_id=item.conversation_id, speaker="system"
        ).values_list("index", flat=True):
            answers[item.pk]["scores"][f"t{index}-repetitive"] = "1"
    assert services.assignment_submit(assignment=second, answers=answers).checks_failed == 1
    assert AttentionAnswer.objects.filter(assignment__hit__survey=survey, passed=False).count() == 2


def test_a_conversation_left_unanswered_is_named_by_its_number_and_nothing_is_stored(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    items = services.assignment_items(assignment=assignment)
    answers = conversation_answers(assignment, leave_out=(items[1].pk,))
    with pytest.raises(services.SubmissionRefused) as refused:
        services.assignment_submit(assignment=assignment, answers=answers)
    assert "conversation 2 is still unanswered" in str(refused.value)
    assert refused.value.missing == (items[1].pk,)
    assert not ConversationRating.objects.exists()
    answers[items[0].pk]["scores"]["t99-repetitive"] = "1"
    answers = conversation_answers(assignment) | {items[0].pk: answers[items[0].pk]}
    with pytest.raises(services.SubmissionRefused, match="unknown question"):
        services.assignment_submit(assignment=assignment, answers=answers)


def test_one_worker_answers_once_per_survey_while_imported_rows_keep_no_survey(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    services.assignment_submit(assignment=assignment, answers=conversation_answers(assignment))
    row = ConversationRating.objects.filter(survey=survey, turn=None).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        ConversationRating.objects.create(
            survey=survey, annotator=row.annotator, conversation=row.conversation, aspect=row.aspect, score=1
        )
    # The same worker's imported rating of that conversation (no survey) is another row.
    ConversationRating.objects.create(
        annotator=row.annotator, conversation=row.conversation, aspect=row.aspect, score=2
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        ConversationRating.objects.create(
            annotator=row.annotator, conversation=row.conversation, aspect=row.aspect, score=3
        )


def test_the_time_estimate_counts_the_reading(researcher):
    short = make_conversation_survey(researcher, name="short", turns=4)
    long = make_conversation_survey(researcher, name="long", turns=24)
    assert _facts(long)["minutes"] > _facts(short)["minutes"] + 2


def test_simulated_annotators_work_a_conversation_survey_and_catch_the_plants(researcher):
    survey = make_conversation_survey(researcher)
    out = io.StringIO()
    call_command("simulate_ratings", survey.name, "--annotators", "4", stdout=out)
    assert ConversationRating.objects.filter(survey=survey, turn=None, aspect="overall").count() == 12 * 2
    assert not AttentionAnswer.objects.filter(assignment__hit__survey=survey, passed=False).exists()


def test_create_survey_command_makes_a_conversation_survey(researcher):
    make_conversation_survey(researcher, name="seed", launch=False)
    out = io.StringIO()
    call_command(
        "create_survey",
        "--dataset",
        "ds-seed",
        "--name",
        "cmd",
        "--task-type",
        "conversation",
        stdout=out,
        stderr=io.StringIO(),
    )
    survey = Survey.objects.get(name="cmd")
    assert survey.task_type == "conversation" and survey.status == Survey.Status.LIVE
    assert kind_for(survey).name == "conversation" and "/s/" in out.getvalue()


def test_the_export_imports_back_as_the_same_ratings(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    services.assignment_submit(assignment=assignment, answers=conversation_answers(assignment, score=2))
    stream = io.StringIO()
    count = kind_for(survey).export(dataset=survey.dataset, survey=survey, stream=stream, fmt="jsonl")
    assert count == ConversationRating.objects.filter(survey=survey).count()
    imported = conversation_ratings_import(file=stream.getvalue().encode(), dataset=survey.dataset)
    assert imported.count == count
    assert ConversationRating.objects.filter(survey=None, aspect="repetitive").exclude(turn=None).exists()


def test_a_survey_asking_an_aspect_on_another_scale_than_the_dataset_is_refused(researcher):
    survey = make_conversation_survey(researcher, launch=False)
    with pytest.raises(services.HITLayoutError, match="rates 'engaging' on 1-5"):
        services.survey_create(
            dataset=survey.dataset,
            name="other",
            owner=researcher,
            task_type="conversation",
            aspects=[{"key": "engaging", "scale_min": 0, "scale_max": 2}],
        )
    assert not Survey.objects.filter(name="other").exists(), "nothing is kept of a refused survey"


def test_default_aspects_take_the_scales_the_dataset_already_rates_them_on(researcher):
    survey = make_conversation_survey(researcher, name="first", launch=False)
    ConversationAspect.objects.filter(dataset=survey.dataset, key="consistent").update(scale_min=0, scale_max=1)
    ConversationAspect.objects.filter(dataset=survey.dataset, key="overall").update(scale_min=0, scale_max=4)
    second = services.survey_create(dataset=survey.dataset, name="second", owner=researcher, task_type="conversation")
    consistent, overall = second.aspects.get(key="consistent"), second.aspects.get(key="overall")
    assert (consistent.scale_min, consistent.scale_max, consistent.per_turn) == (0, 1, False)
    assert consistent.scale_labels == {"0": "Often contradicts itself", "1": "Never"}
    assert (overall.scale_min, overall.scale_max) == (0, 4) and overall.scale_labels["4"] == "Excellent"


def test_a_next_task_avoids_conversations_the_annotator_already_read(researcher):
    # Twelve conversations a system: enough HITs that one shares no conversation (nor a gold copy of
    # one) with the first, whatever layout the survey's random token draws.
    survey = make_conversation_survey(researcher, n=12, assignments_per_hit=1, max_hits_per_annotator=4)
    first = claimed(survey)
    services.assignment_submit(assignment=first, answers=conversation_answers(first))
    read = set(HITItem.objects.filter(hit=first.hit).values_list("conversation_id", flat=True))
    fresh = [
        hit
        for hit in survey.hits.exclude(pk=first.hit_id)
        if not read & set(hit.items.values_list("conversation_id", flat=True))
    ]
    assert fresh, "the layout leaves a HIT that shows none of them"
    second = claimed(survey)
    shown = set(HITItem.objects.filter(hit=second.hit).values_list("conversation_id", flat=True))
    assert not read & shown, "neither a gold copy's original nor the original's gold copy is met again first"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("overall", "9", "outside the scale 1-5"), ("overall", "good", "is not an answer"), (None, "yes", "not a yes/no")],
)
def test_a_made_up_answer_is_refused_by_its_conversation_number(researcher, key, value, message):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    answers = conversation_answers(assignment)
    item = services.assignment_items(assignment=assignment)[0]
    bot = ConversationTurn.objects.filter(conversation_id=item.conversation_id, speaker=SYSTEM_SPEAKER).first()
    answers[item.pk]["scores"][key or f"t{bot.index}-repetitive"] = value
    with pytest.raises(services.SubmissionRefused, match=f"Conversation 1: .*{message}"):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert not ConversationRating.objects.exists()
