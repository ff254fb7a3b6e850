"""Importing and exporting datasets of conversations (issue 37): all or nothing, every problem named."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.importing import DataImportError
from annotation.importing.text import MAX_FIELD_CHARS
from annotation.models import Conversation, ConversationTurn, Dataset, System
from annotation.services.conversations import conversations_import
from annotation.services.exporting.conversations import conversations_export
from tests.annotation.conversation_files import conversation, conversations_csv, jsonl, small_study

pytestmark = pytest.mark.django_db


def test_import_stores_conversations_with_ordered_turns_seed_and_meta(researcher):
    dataset = conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)
    assert dataset.owner == researcher
    assert sorted(System.objects.filter(dataset=dataset).values_list("name", flat=True)) == ["blender", "meena"]
    d1 = Conversation.objects.get(dataset=dataset, external_id="d1")
    assert (d1.system.name, d1.seed, d1.meta, d1.position, d1.source) == (
        "meena",
        "topic-7",
        {"topic": "pets"},
        0,
        "imported",
    )
    turns = list(d1.turns.values_list("index", "speaker", "text"))
    assert turns == [
        (0, "user", "Hi!"),
        (1, "system", "Hello! Do you like cats?"),
        (2, "user", "Yes."),
        (3, "system", "Me too."),
    ]
    assert [t.is_system for t in d1.turns.all()] == [False, True, False, True]
    assert Conversation.objects.get(dataset=dataset, external_id="d2").seed == ""
    assert ConversationTurn.objects.filter(conversation__dataset=dataset).count() == 10


def test_csv_import_holds_the_same_as_jsonl(researcher):
    from_jsonl = conversations_import(file=jsonl(small_study()), name="a", owner=researcher)
    from_csv = conversations_import(file=conversations_csv(small_study()), name="b", owner=researcher, fmt="csv")
    assert _exported(from_jsonl) == _exported(from_csv)


def _exported(dataset, fmt="jsonl"):
    stream = io.StringIO()
    conversations_export(dataset=dataset, stream=stream, fmt=fmt)
    return stream.getvalue()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_imports_back_to_the_same_file(researcher, fmt):
    records = [
        *small_study(),
        conversation("d4", "meena", ["=1+2", "+SUM(A1)", "-x", "@me\ttab"], extra=[1, {"a": None}]),
    ]
    first = conversations_import(file=jsonl(records), name="first", owner=researcher)
    written = _exported(first, fmt)
    second = conversations_import(file=written.encode(), name="second", owner=researcher, fmt=fmt)
    assert _exported(second, fmt) == written
    assert _exported(second) == _exported(first)
    turns = Conversation.objects.get(dataset=second, external_id="d4").turns.values_list("text", flat=True)
    assert list(turns) == ["=1+2", "+SUM(A1)", "-x", "@me\ttab"]


def test_csv_export_neutralises_formula_cells(researcher):
    dataset = conversations_import(file=jsonl([conversation("d1", "meena", ["=HYPERLINK(1)", "ok"])]), name="x")
    written = _exported(dataset, "csv")
    assert "'=HYPERLINK(1)" in written
    assert ",=HYPERLINK" not in written


def test_export_command_writes_the_import_format(researcher, tmp_path):
    conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)
    out = tmp_path / "out.jsonl"
    call_command("export_conversations", "--dataset", "chats", "--output", str(out), stderr=io.StringIO())
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == small_study()[0]
    assert [line["conversation_id"] for line in lines] == ["d1", "d2", "d3"]


def test_import_command_reports_counts_and_owner(researcher, tmp_path):
    path = tmp_path / "chats.csv"
    path.write_bytes(conversations_csv(small_study()))
    out = io.StringIO()
    call_command("import_conversations", str(path), "--name", "chats", "--owner", researcher.username, stdout=out)
    assert "3 conversations, 2 systems, 10 turns" in out.getvalue()
    assert Dataset.objects.get(name="chats").owner == researcher


def test_a_byte_order_mark_is_dropped(researcher):
    dataset = conversations_import(file=b"\xef\xbb\xbf" + jsonl(small_study()), name="bom")
    assert dataset.conversations.first().external_id == "d1"


def _line(record):
    return json.dumps(record, ensure_ascii=False)


GOOD = _line(conversation("ok", "meena", ["a", "b"]))

REFUSED_JSONL = [
    ('{"system": "s", "turns": [{"speaker": "system", "text": "x"}]}', "field 'conversation_id': missing"),
    ('{"conversation_id": "d", "turns": [{"speaker": "system", "text": "x"}]}', "field 'system': missing"),
    ('{"conversation_id": "d", "system": "s", "turns": []}', "field 'turns': must be a non-empty list"),
    ('{"conversation_id": "d", "system": "s", "turns": ["hi"]}', "field 'turns[0]': a turn is an object"),
    ('{"conversation_id": "d", "system": "s", "turns": [{"speaker": "system", "text": "x", "x": 1}]}', "unknown key"),
    ('{"conversation_id": "d", "system": "s", "turns": [{"text": "x"}]}', "field 'turns[0].speaker': missing"),
    ('{"conversation_id": "d", "system": "s", "turns": [{"speaker": " ", "text": "x"}]}', "field 'turns[0].speaker'"),
    (
        '{"conversation_id": "d", "system": "s", "turns": [{"speaker": "system", "text": 3}]}',
        "field 'turns[0].text': must be a string",
    ),
    (
        '{"conversation_id": "d", "system": "s", "turns": [{"speaker": "user", "text": "x"}]}',
        "no turn of speaker 'system'",
    ),
    (
        '{"conversation_id": "d ", "system": "s", "turns": [{"speaker": "system", "text": "x"}]}',
        "field 'conversation_id': 'd ' starts or ends with white space",
    ),
    (
        '{"conversation_id": "d", "system": "(reference)", "turns": [{"speaker": "system", "text": "x"}]}',
        "field 'system'",
    ),
    (
        '{"conversation_id": "d", "system": "s", "seed": ["x"], "turns": [{"speaker": "system", "text": "x"}]}',
        "field 'seed': must be a string",
    ),
    ('{"conversation_id": "d", "system": "s", "turns": [{"speaker": "system", "text": "\\u0000"}]}', "NUL character"),
    (
        '{"conversation_id": "d", "system": "s", "n": NaN, "turns": [{"speaker": "system", "text": "x"}]}',
        "field 'n': NaN",
    ),
    ("[1, 2]", "expected a JSON object"),
    ("{broken", "line 2"),
]


@pytest.mark.parametrize(("bad_line", "message"), REFUSED_JSONL)
def test_import_refuses_a_bad_line_naming_line_and_field_and_stores_nothing(bad_line, message):
    with pytest.raises(DataImportError) as refused:
        conversations_import(file=f"{GOOD}\n{bad_line}\n".encode(), name="bad")
    assert str(refused.value).startswith("line 2")
    assert message in str(refused.value)
    assert not Dataset.objects.exists()
    assert not Conversation.objects.exists()


def test_import_refuses_a_duplicate_conversation_id_naming_the_first_line():
    with pytest.raises(
        DataImportError, match=r"line 3, field 'conversation_id': duplicate conversation id 'ok' \(first at line 1\)"
    ):
        conversations_import(file=f"{GOOD}\n{_line(conversation('x', 's', ['a', 'b']))}\n{GOOD}\n".encode(), name="dup")
    assert not Dataset.objects.exists()


def test_import_refuses_a_turn_longer_than_the_field_limit():
    record = conversation("d", "s", ["a", "b" * (MAX_FIELD_CHARS + 1)])
    with pytest.raises(
        DataImportError, match=r"line 1, field 'turns\[1\]\.text': 131,073 characters, longer than the 131,072"
    ):
        conversations_import(file=jsonl([record]), name="long")
    assert not Dataset.objects.exists()


def test_import_refuses_a_file_not_in_utf8():
    with pytest.raises(DataImportError, match="not UTF-8"):
        conversations_import(
            file=GOOD.encode() + b"\n" + _line(conversation("d", "s", ["\xe9", "b"])).encode("latin-1"), name="enc"
        )
    assert not Dataset.objects.exists()


def test_import_lists_every_bad_line_at_once():
    lines = [GOOD, '{"conversation_id": "a"}', GOOD.replace('"ok"', '"b"'), '{"conversation_id": "c"}']
    with pytest.raises(DataImportError) as refused:
        conversations_import(file="\n".join(lines).encode(), name="many")
    report = refused.value.report_lines()
    assert report[0] == "2 errors in the file. Nothing was imported."
    assert report[1].startswith("line 2, field 'system': missing")
    assert report[2].startswith("line 4, field 'system': missing")


def test_import_refuses_a_name_the_owner_already_uses(researcher, other_researcher):
    conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)
    conversations_import(file=jsonl(small_study()), name="chats", owner=other_researcher)  # names are per owner
    with pytest.raises(DataImportError, match="a dataset named 'chats' already exists"):
        conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)
    assert Dataset.objects.count() == 2


REFUSED_CSV = [
    ("d1,meena,,user,hi,\nd1,blender,,system,yo,\n", "row 3, field 'system': 'blender' differs from 'meena'"),
    ("d1,meena,s1,user,hi,\nd1,meena,s2,system,yo,\n", "row 3, field 'seed': 's2' differs from 's1'"),
    (
        'd1,meena,,user,hi,\nd1,meena,,system,yo,"{""a"": 1}"\n',
        "row 3, field 'meta': a conversation's meta belongs on its first row",
    ),
    (
        'd1,meena,,user,hi,"{""system"": 1}"\nd1,meena,,system,yo,\n',
        "row 2, field 'meta': 'system' is a field of its own",
    ),
    (
        "d1,meena,,user,hi,\nd1,meena,,user,yo,\n",
        "row 2, field 'speaker': conversation 'd1' has no turn of speaker 'system'",
    ),
    ("d1,meena,,,hi,\n", "row 2, field 'speaker': must not be empty"),
    (
        "d1,meena,,system,hi,\nd2,meena,,system,x,\nd1,meena,,system,yo,\n",
        "row 4, field 'conversation_id': duplicate conversation id 'd1' (first at row 2)",
    ),
    ("d1,meena,,system\n", "row 2: expected 6 fields, found 4"),
]


@pytest.mark.parametrize(("rows", "message"), REFUSED_CSV)
def test_csv_import_refuses_bad_rows_naming_row_and_field(rows, message):
    content = "conversation_id,system,seed,speaker,text,meta\n" + rows
    with pytest.raises(DataImportError) as refused:
        conversations_import(file=content.encode(), name="bad", fmt="csv")
    assert message in str(refused.value)
    assert not Dataset.objects.exists()


def test_csv_import_names_a_missing_column():
    with pytest.raises(DataImportError, match="row 1: missing column 'speaker' in the header"):
        conversations_import(file=b"conversation_id,system,text\nd1,meena,hi\n", name="bad", fmt="csv")


def test_import_command_lists_the_errors_and_fails(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"conversation_id": "d"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad.jsonl: line 1, field 'system': missing.*Nothing was imported"):
        call_command("import_conversations", str(path), "--name", "x")
    assert not Dataset.objects.exists()
