"""Importing ratings of conversations (whole and per system turn) and ACUTE-style comparisons (issue 37)."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.importing import DataImportError
from annotation.models import ConversationAspect, ConversationJudgement, ConversationRating
from annotation.services.conversation_answers import conversation_judgements_import, conversation_ratings_import
from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import jsonl, small_study

pytestmark = pytest.mark.django_db

ENGAGING = "Who would you prefer to talk to for a long conversation?"


@pytest.fixture
def chats(researcher):
    return conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)


def _ratings(*records):
    return jsonl(records)


def test_whole_and_per_turn_ratings_are_stored_with_a_scale_per_aspect(chats):
    imported = conversation_ratings_import(
        file=_ratings(
            {"conversation_id": "d1", "worker": "w1", "aspect": "overall", "score": 5},
            {"conversation_id": "d1", "worker": "w1", "aspect": "consistent", "score": 0},
            {"conversation_id": "d1", "turn": 1, "worker": "w1", "aspect": "sensible", "score": 2, "seconds": 3.5},
            {"conversation_id": "d2", "turn": 3, "worker": "w2", "aspect": "sensible", "score": 0},
        ),
        dataset=chats,
        scales={"consistent": (0, 1), "sensible": (0, 2)},
    )
    assert (imported.count, imported.annotators) == (4, 2)
    assert imported.aspects == {"consistent": (0, 1), "overall": (1, 5), "sensible": (0, 2)}
    scales = {a.key: (a.scale_min, a.scale_max) for a in ConversationAspect.objects.filter(dataset=chats)}
    assert scales == imported.aspects
    whole = ConversationRating.objects.get(conversation__external_id="d1", aspect="overall")
    assert (whole.turn, whole.score, whole.annotator.worker_id, whole.annotator.provider) == (None, 5, "w1", "imported")
    per_turn = ConversationRating.objects.get(conversation__external_id="d1", aspect="sensible")
    assert (per_turn.turn.index, per_turn.turn.speaker, per_turn.turn.text) == (1, "system", "Hello! Do you like cats?")
    assert per_turn.seconds == 3.5
    assert ConversationRating.objects.get(conversation__external_id="d2").turn.text == "Not much, and you?"


def test_a_later_import_keeps_an_aspects_scale_and_refuses_another(chats):
    line = {"conversation_id": "d1", "worker": "w1", "aspect": "consistent", "score": 1}
    conversation_ratings_import(file=_ratings(line), dataset=chats, scales={"consistent": (0, 1)})
    # No scale given: the stored 0-1 applies, so 0 is accepted and 2 refused.
    conversation_ratings_import(file=_ratings({**line, "worker": "w2", "score": 0}), dataset=chats)
    with pytest.raises(
        DataImportError, match=r"line 1, field 'score': 2 is outside the scale 0-1 of aspect 'consistent'"
    ):
        conversation_ratings_import(file=_ratings({**line, "worker": "w3", "score": 2}), dataset=chats)
    with pytest.raises(DataImportError, match=r"aspect 'consistent' already has the scale 0-1 .* not 1-5"):
        conversation_ratings_import(file=_ratings({**line, "worker": "w4"}), dataset=chats, scale_min=1, scale_max=5)
    assert ConversationRating.objects.count() == 2


REFUSED = [
    (
        {"conversation_id": "nope", "worker": "w", "score": 3},
        "field 'conversation_id': unknown conversation 'nope' in dataset 'chats'",
    ),
    (
        {"conversation_id": "d1", "turn": 0, "worker": "w", "score": 3},
        "field 'turn': turn 0 of conversation 'd1' is 'user''s, not the system's",
    ),
    (
        {"conversation_id": "d1", "turn": 4, "worker": "w", "score": 3},
        "field 'turn': conversation 'd1' has 4 turns (0 to 3)",
    ),
    ({"conversation_id": "d1", "turn": -1, "worker": "w", "score": 3}, "field 'turn': -1 is not a turn index"),
    (
        {"conversation_id": "d1", "turn": "1", "worker": "w", "score": 3},
        "field 'turn': must be a whole number, not str",
    ),
    (
        {"conversation_id": "d1", "worker": "w", "score": 6},
        "field 'score': 6 is outside the scale 1-5 of aspect 'overall'",
    ),
    ({"conversation_id": "d1", "worker": "w", "score": 2.5}, "field 'score': 2.5 is not a whole number"),
    ({"conversation_id": "d1", "worker": "w ", "score": 2}, "field 'worker'"),
    ({"conversation_id": "d1", "worker": "w", "score": 2, "aspect": "not a slug"}, "field 'aspect'"),
    ({"conversation_id": "d1", "worker": "w", "score": 2, "system": "meena"}, "field 'system': unknown field"),
    ({"conversation_id": "d1", "worker": "w"}, "field 'score': missing"),
]


@pytest.mark.parametrize(("record", "message"), REFUSED)
def test_a_bad_rating_is_refused_with_its_line_and_field_and_nothing_is_stored(chats, record, message):
    good = {"conversation_id": "d2", "worker": "ok", "score": 4}
    with pytest.raises(DataImportError) as refused:
        conversation_ratings_import(file=_ratings(good, record), dataset=chats)
    assert str(refused.value).startswith("line 2")
    assert message in str(refused.value)
    assert not ConversationRating.objects.exists()
    assert not ConversationAspect.objects.exists()


def test_a_rating_given_twice_is_refused_in_the_file_and_against_an_earlier_import(chats):
    line = {"conversation_id": "d1", "turn": 3, "worker": "w", "aspect": "sensible", "score": 3}
    with pytest.raises(
        DataImportError, match=r"line 2: worker 'w' already rated turn 3 of conversation 'd1' .*\(line 1\)"
    ):
        conversation_ratings_import(file=_ratings(line, line), dataset=chats)
    conversation_ratings_import(file=_ratings(line), dataset=chats)
    with pytest.raises(DataImportError, match="line 1, field 'worker': worker 'w' already has this rating"):
        conversation_ratings_import(file=_ratings(line), dataset=chats)
    assert ConversationRating.objects.count() == 1


def test_csv_ratings_leave_turn_empty_for_the_whole_conversation(chats):
    content = "conversation_id,turn,worker,aspect,score\nd1,,w1,overall,4\nd1,3,w1,overall,2\n"
    conversation_ratings_import(file=content.encode(), dataset=chats, fmt="csv")
    assert sorted(ConversationRating.objects.values_list("turn__index", "score"), key=str) == [(3, 2), (None, 4)]


def test_the_ratings_command_takes_a_scale_per_aspect(chats, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        _ratings(
            {"conversation_id": "d1", "worker": "w", "aspect": "consistent", "score": 0},
            {"conversation_id": "d1", "worker": "w", "aspect": "coherent", "score": 3},
        )
    )
    out = io.StringIO()
    call_command(
        "import_conversation_ratings", str(path), "--dataset", "chats", "--scale", "consistent=0-1",
        "--scale-min", "1", "--scale-max", "3", stdout=out,
    )  # fmt: skip
    assert "Imported 2 conversation ratings by 1 annotators" in out.getvalue()
    assert "coherent 1-3, consistent 0-1" in out.getvalue()
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_conversation_ratings", str(path), "--dataset", "chats", "--scale", "consistent=0-2")


def _judgement(a="d1", b="d2", worker="w1", winner="a", question=ENGAGING, **extra):
    return {"conversation_a": a, "conversation_b": b, "worker": worker, "winner": winner, "question": question, **extra}


def test_comparisons_are_stored_with_question_and_reason(chats):
    imported = conversation_judgements_import(
        file=jsonl([_judgement(reason="d1 stays on topic"), _judgement(a="d3", b="d1", winner="TIE", worker="w2")]),
        dataset=chats,
    )
    assert (imported.count, imported.annotators) == (2, 2)
    first = ConversationJudgement.objects.get(annotator__worker_id="w1")
    assert (first.conversation_a.external_id, first.conversation_b.external_id, first.winner) == ("d1", "d2", "a")
    assert (first.question, first.reason, first.position_known) == (ENGAGING, "d1 stays on topic", False)
    assert ConversationJudgement.objects.get(annotator__worker_id="w2").winner == "tie"


REFUSED_JUDGEMENTS = [
    (_judgement(b="d9"), "field 'conversation_b': unknown conversation 'd9'"),
    (_judgement(b="d1"), "field 'conversation_b': a conversation cannot be compared with itself"),
    (_judgement(a="d2", b="d3"), "field 'conversation_b': both conversations are system 'blender''s"),
    (_judgement(winner="left"), "field 'winner': 'left' is not a, b or tie"),
    (_judgement(question=""), "field 'question': must not be empty"),
    (_judgement(question="x" * 301), "field 'question': longer than 300 characters"),
    (_judgement(reason="x" * 201), "field 'reason': longer than 200 characters"),
    (_judgement(a="d2", b="d1", winner="b"), "line 2: worker 'w1' already compared conversations 'd1' and 'd2'"),
]


@pytest.mark.parametrize(("record", "message"), REFUSED_JUDGEMENTS)
def test_a_bad_comparison_is_refused_with_its_line_and_field_and_nothing_is_stored(chats, record, message):
    with pytest.raises(DataImportError) as refused:
        conversation_judgements_import(file=jsonl([_judgement(), record]), dataset=chats)
    assert str(refused.value).startswith("line 2")
    assert message in str(refused.value)
    assert not ConversationJudgement.objects.exists()


def test_the_judgements_command_refuses_a_comparison_already_imported(chats, tmp_path):
    path = tmp_path / "acute.csv"
    path.write_text(
        "conversation_a,conversation_b,worker,winner,question,reason\nd1,d2,w1,b,humanness,\n", encoding="utf-8"
    )
    out = io.StringIO()
    call_command("import_conversation_judgements", str(path), "--dataset", "chats", stdout=out)
    assert "Imported 1 conversation comparisons by 1 annotators" in out.getvalue()
    with pytest.raises(CommandError, match="row 2, field 'worker': worker 'w1' already has this comparison"):
        call_command("import_conversation_judgements", str(path), "--dataset", "chats")
    assert ConversationJudgement.objects.count() == 1


def test_json_numbers_as_conversation_ids_are_read_as_text(researcher):
    dataset = conversations_import(
        file=jsonl([{"conversation_id": 7, "system": "s", "turns": [{"speaker": "system", "text": "x"}]}]), name="n"
    )
    conversation_ratings_import(
        file=(json.dumps({"conversation_id": 7, "worker": "w", "score": 3}) + "\n").encode(), dataset=dataset
    )
    assert ConversationRating.objects.get().conversation.external_id == "7"
