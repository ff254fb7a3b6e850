"""The parsers in annotation.importing are pure: these tests need no database."""

import io

import pytest

from annotation.importing import DataImportError, decode, detect_format, parse_dataset, parse_ratings, read_bytes


def test_turns_may_be_strings_or_speaker_objects():
    text = '{"context_id": "c1", "context": ["hi", {"speaker": "B", "text": "yo"}, {"text": "x"}], "responses": []}'
    (context,) = parse_dataset(text, "jsonl")
    assert context.turns == [
        {"speaker": None, "text": "hi"},
        {"speaker": "B", "text": "yo"},
        {"speaker": None, "text": "x"},
    ]
    assert context.references == []


def test_integer_context_ids_are_read_as_strings_and_blank_lines_skipped():
    text = '\n{"context_id": 7, "context": ["hi"], "responses": [{"system": "s", "text": "t"}]}\r\n\r\n'
    (context,) = parse_dataset(text, "jsonl")
    assert context.external_id == "7"
    assert context.line == 2


def test_metrics_are_ignored_but_other_extra_keys_become_meta():
    text = (
        '{"context_id": "c", "context": ["hi"], "metrics": {"x": 1}, "lang": "en",'
        ' "responses": [{"system": "s", "text": "t", "metrics": {"bleu": 0.1}, "seed": 3}]}'
    )
    (context,) = parse_dataset(text, "jsonl")
    assert context.meta == {"lang": "en"}
    assert context.responses[0].meta == {"seed": 3}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"context_id": "c", "context": ["a\\u0000b"], "responses": []}', "field 'context[0]': contains a NUL"),
        ('{"context_id": "c", "context": ["\\ud800"], "responses": []}', "contains an unpaired surrogate"),
        ('{"context_id": "c", "context": ["a"], "responses": [], "x": ["\\u0000"]}', "field 'x': contains a NUL"),
        ('{"context_id": "", "context": ["a"], "responses": []}', "field 'context_id': must not be empty"),
        ('{"context_id": true, "context": ["a"], "responses": []}', "field 'context_id': must be a string"),
        ('{"context_id": "c", "context": "a", "responses": []}', "field 'context': must be a non-empty list"),
        ('{"context_id": "c", "context": ["a"], "responses": [{"system": "", "text": "t"}]}', "must not be empty"),
        ('{"context_id": "c", "context": ["a"], "references": "r", "responses": []}', "field 'references'"),
        ('{"context_id": "c", "context": [{"text": "a", "who": "B"}], "responses": []}', "unknown key 'who'"),
    ],
)
def test_parse_dataset_names_line_and_field(text, message):
    with pytest.raises(DataImportError) as error:
        parse_dataset(text, "jsonl")
    assert message in str(error.value)
    assert str(error.value).startswith("line 1")


def test_decode_drops_a_byte_order_mark_and_refuses_other_encodings():
    assert decode("\ufeffhello".encode()) == "hello"
    with pytest.raises(DataImportError, match=r"line 3: the file is not UTF-8 \(byte 0xe9"):
        decode("a\nb\ncaf\u00e9\n".encode("latin-1"))
    with pytest.raises(DataImportError, match="the file is empty"):
        decode(b"  \n\t\n")


def test_read_bytes_accepts_paths_bytes_and_file_objects(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"abc")
    assert read_bytes(path) == read_bytes(str(path)) == read_bytes(b"abc") == read_bytes(io.BytesIO(b"abc"))
    assert read_bytes(io.StringIO("abc")) == b"abc"
    with pytest.raises(DataImportError, match="cannot read"):
        read_bytes(tmp_path / "missing.jsonl")


def test_format_comes_from_the_option_or_the_file_name():
    assert detect_format(None, "data.CSV") == "csv"
    assert detect_format(None, "data.jsonl") == "jsonl"
    assert detect_format(None, b"...") == "jsonl"
    assert detect_format("csv", "data.jsonl") == "csv"
    with pytest.raises(DataImportError, match="unknown format 'xml'"):
        detect_format("xml", "data.xml")


def test_parse_ratings_reads_defaults_and_whole_floats():
    text = (
        '{"context_id": "c1", "system": "s", "worker": "w", "score": 4.0}\n'
        '{"context_id": 2, "system": "s", "worker": "w", "score": 1, "aspect": "topic", "seconds": 3.5}\n'
    )
    first, second = parse_ratings(text, "jsonl")
    assert (first.score, first.aspect, first.seconds) == (4, "overall", None)
    assert (second.context_id, second.aspect, second.seconds, second.line) == ("2", "topic", 3.5, 2)


def test_parse_ratings_checks_the_given_scale():
    line = '{"context_id": "c1", "system": "s", "worker": "w", "score": 0}'
    assert parse_ratings(line, "jsonl", scale_min=0, scale_max=10)[0].score == 0
    with pytest.raises(DataImportError, match="0 is outside the survey's scale 1-7"):
        parse_ratings(line, "jsonl", scale_min=1, scale_max=7)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"context_id": "c", "system": "s", "worker": "w", "score": true}', "field 'score': must be a whole number"),
        ('{"context_id": "c", "system": "s", "worker": "w\\u0000", "score": 1}', "field 'worker': contains a NUL"),
        ('{"context_id": "c", "system": "s", "worker": "w", "score": 1, "seconds": -2}', "field 'seconds'"),
        ('{"context_id": "c", "system": 3, "worker": "w", "score": 1}', "field 'system': must be a string"),
    ],
)
def test_parse_ratings_names_line_and_field(text, message):
    with pytest.raises(DataImportError) as error:
        parse_ratings(text, "jsonl")
    assert message in str(error.value)


def test_csv_ratings_allow_blank_optional_columns():
    text = "context_id,system,worker,score,aspect,seconds\nc1,s,w,3,,\nc1,s,w,2,topic,1.5\n"
    first, second = parse_ratings(text, "csv")
    assert (first.aspect, first.seconds) == ("overall", None)
    assert (second.aspect, second.seconds, second.line) == ("topic", 1.5, 3)
