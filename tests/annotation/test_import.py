import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.importing import DataImportError
from annotation.models import Annotator, Context, Dataset, Rating, Reference, Response, Survey, System
from annotation.services import dataset_import, ratings_import
from tests import shared_loaders
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS, dataset_csv, ratings_csv, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def import_dataset(path, name="study", *extra):
    call_command("import_dataset", str(path), "--name", name, *extra, stdout=io.StringIO())
    return Dataset.objects.get(name=name)


def import_ratings(path, dataset="study", *extra):
    call_command("import_ratings", str(path), "--dataset", dataset, *extra, stdout=io.StringIO())


def assert_nothing_written():
    assert Dataset.objects.count() == 0
    assert Context.objects.count() == 0
    assert System.objects.count() == 0
    assert Response.objects.count() == 0
    assert Reference.objects.count() == 0


# --- real data ----------------------------------------------------------------------


@pytest.mark.shared_data
def test_import_commands_load_usr_personachat_with_counts(shared_data, tmp_path, db):
    records, ratings = shared_loaders.usr_personachat(shared_data)
    dataset = import_dataset(write_jsonl(tmp_path / "usr.jsonl", records), "usr")
    import_ratings(write_jsonl(tmp_path / "usr-ratings.jsonl", ratings), "usr", "--survey", "usr-overall")
    assert dataset.contexts.count() == 60
    assert dataset.systems.count() == 5
    assert Response.objects.filter(context__dataset=dataset).count() == 300
    assert Reference.objects.filter(context__dataset=dataset).count() == 60
    survey = Survey.objects.get(name="usr-overall")
    assert survey.provider == "imported"
    assert survey.ratings.count() == 900
    assert survey.ratings.values("annotator").distinct().count() == 4
    assert list(survey.aspects.values_list("key", "scale_min", "scale_max")) == [("overall", 1, 5)]
    first = dataset.contexts.get(external_id="pc00")
    assert first.meta["fact"] == records[0]["fact"]
    assert [t["text"] for t in first.turns] == records[0]["context"]


@pytest.mark.shared_data
@pytest.mark.parametrize("corpus", ["dailydialog", "empatheticdialogues"])
def test_import_commands_load_grade_in_csv_form(shared_data, tmp_path, db, corpus):
    records, ratings = shared_loaders.grade(shared_data, corpus)
    (tmp_path / "grade.csv").write_text(dataset_csv(records), encoding="utf-8")
    (tmp_path / "grade-ratings.csv").write_text(ratings_csv(ratings), encoding="utf-8")
    dataset = import_dataset(tmp_path / "grade.csv", corpus)
    import_ratings(tmp_path / "grade-ratings.csv", corpus)
    assert dataset.contexts.count() == 150
    assert sorted(dataset.systems.values_list("name", flat=True)) == sorted(shared_loaders.GRADE_SYSTEMS)
    assert Response.objects.filter(context__dataset=dataset).count() == 300
    assert Rating.objects.filter(survey__dataset=dataset).count() == len(ratings)
    assert Survey.objects.get(dataset=dataset).name == f"{corpus}-imported"


def test_csv_and_jsonl_forms_import_the_same_study(tmp_path, db):
    (tmp_path / "small.csv").write_text(dataset_csv(SMALL_DATASET), encoding="utf-8")
    from_csv = import_dataset(tmp_path / "small.csv", "from-csv")
    from_jsonl = import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET), "from-jsonl")

    def snapshot(dataset):
        return [
            (
                c.external_id,
                c.turns,
                c.meta,
                [r.text for r in c.references.all()],
                sorted((r.system.name, r.text, r.meta) for r in c.responses.all()),
            )
            for c in dataset.contexts.all()
        ]

    assert snapshot(from_csv) == snapshot(from_jsonl)


def test_import_keeps_speakers_meta_and_several_references(tmp_path, db):
    dataset = import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET))
    c1 = dataset.contexts.get(external_id="c1")
    assert c1.turns == [{"speaker": "A", "text": "Hi, how are you?"}, {"speaker": "B", "text": "Fine, and you?"}]
    assert c1.meta == {"topic": "greeting", "source": {"corpus": "made-up", "split": "test"}}
    assert list(c1.references.values_list("text", flat=True)) == ["Great, thanks!", "Not bad at all."]
    assert c1.responses.get(system__name="hred").meta == {"temperature": 0.7}
    c2 = dataset.contexts.get(external_id="c2")
    assert c2.turns == [{"speaker": None, "text": "Where should we eat tonight?"}]
    assert c2.references.count() == 0
    assert [c.external_id for c in dataset.contexts.all()] == ["c1", "c2"]


def test_import_ratings_creates_one_aspect_per_key_on_the_chosen_scale(tmp_path, db):
    dataset = import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET))
    ratings = [*SMALL_RATINGS, {"context_id": "c2", "system": "human", "worker": "w3", "score": 7}]
    import_ratings(write_jsonl(tmp_path / "r.jsonl", ratings), "study", "--scale-min", "0", "--scale-max", "10")
    survey = Survey.objects.get(dataset=dataset)
    assert list(survey.aspects.values_list("key", "scale_min", "scale_max")) == [
        ("overall", 0, 10),
        ("topicality", 0, 10),
    ]
    assert survey.ratings.filter(aspect="topicality").get().score == 1
    assert sorted(survey.systems.values_list("name", flat=True)) == ["hred", "human"]
    assert survey.status == "closed"


def test_imported_workers_are_shared_annotators_across_imports(tmp_path, db):
    import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET))
    path = write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS)
    import_ratings(path, "study", "--survey", "first")
    import_ratings(path, "study", "--survey", "second")
    assert Annotator.objects.filter(provider="imported").count() == 2
    assert Rating.objects.count() == 2 * len(SMALL_RATINGS)


def test_import_dataset_owner_option_sets_the_owner(tmp_path, researcher):
    dataset = import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET), "study", "--owner", "alice")
    assert dataset.owner == researcher
    import_ratings(write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS))
    assert Survey.objects.get().owner == researcher


# --- bad datasets: clear message, nothing written ------------------------------------

GOOD_LINE = json.dumps(SMALL_DATASET[1])
BAD_DATASETS = {
    "broken_json": (f'{GOOD_LINE}\n{{"context_id": "c3", "context": [\n', "line 2: broken JSON"),
    "missing_context_id": ('{"context": ["hi"], "responses": []}\n', "line 1, field 'context_id': missing"),
    "missing_responses": ('{"context_id": "x", "context": ["hi"]}\n', "line 1, field 'responses': missing"),
    "missing_response_text": (
        '{"context_id": "x", "context": ["hi"], "responses": [{"system": "a"}]}\n',
        "line 1, field 'responses[0].text': missing",
    ),
    "empty_context": ('{"context_id": "x", "context": [], "responses": []}\n', "line 1, field 'context'"),
    "turn_not_text": (
        '{"context_id": "x", "context": ["hi", 3], "responses": []}\n',
        "line 1, field 'context[1]'",
    ),
    "duplicate_context_id": (f"{GOOD_LINE}\n{GOOD_LINE}\n", "line 2, field 'context_id': duplicate context id 'c2'"),
    "duplicate_system": (
        '{"context_id": "x", "context": ["hi"], "responses": [{"system": "a", "text": "1"}, '
        '{"system": "a", "text": "2"}]}\n',
        "line 1, field 'responses[1].system': duplicate system 'a'",
    ),
    "not_an_object": ('["c1", "hi"]\n', "line 1: expected a JSON object"),
    "empty_file": ("", "the file is empty"),
    "blank_file": ("\n \n\n", "the file is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_DATASETS))
def test_import_dataset_rejects_bad_input_and_writes_nothing(tmp_path, db, case):
    content, message = BAD_DATASETS[case]
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError) as error:
        import_dataset(path)
    assert message in str(error.value)
    assert "Nothing was imported" in str(error.value)
    assert_nothing_written()


def test_import_dataset_rejects_a_file_that_is_not_utf8(tmp_path, db):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((GOOD_LINE + "\n" + '{"context_id": "ç"}\n').encode("latin-1"))
    with pytest.raises(CommandError, match=r"line 2: the file is not UTF-8"):
        import_dataset(path)
    assert_nothing_written()


def test_import_dataset_rejects_an_error_on_the_last_line_after_many_good_ones(tmp_path, db):
    records = [{**SMALL_DATASET[1], "context_id": f"c{i}"} for i in range(500)]
    path = write_jsonl(tmp_path / "big.jsonl", [*records, {**SMALL_DATASET[1], "context_id": "c7"}])
    with pytest.raises(
        CommandError, match=r"line 501, field 'context_id': duplicate context id 'c7' \(first at line 8\)"
    ):
        import_dataset(path)
    assert_nothing_written()


def test_import_dataset_rejects_a_name_already_taken(tmp_path, db):
    path = write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET)
    import_dataset(path)
    with pytest.raises(CommandError, match="a dataset named 'study' already exists"):
        import_dataset(path)
    assert Dataset.objects.count() == 1


BAD_CSV_DATASETS = {
    "missing_column": ("context_id,kind,speaker\nc1,context,A\n", "row 1: missing column 'text'"),
    "another_files_header": (
        "id,turn,who,model,utterance\nc1,context,A,,Hi\n",
        "row 1: missing columns 'context_id', 'kind', 'text' in the header "
        "(it has: 'id', 'turn', 'who', 'model', 'utterance')",
    ),
    "separated_by_semicolons": (
        "context_id;kind;text\nc1;context;hi\n",
        "row 1: missing columns 'context_id', 'kind', 'text' in the header (it has: 'context_id;kind;text')",
    ),
    "unknown_column": ("context_id,kind,text,colour\nc1,context,hi,red\n", "row 1: unknown column 'colour'"),
    "unknown_kind": ("context_id,kind,text\nc1,context,hi\nc1,answer,yes\n", "row 3, field 'kind': unknown kind"),
    "response_without_system": (
        "context_id,kind,system,text\nc1,context,,hi\nc1,response,,yes\n",
        "row 3, field 'system': missing",
    ),
    "duplicate_context_id": (
        "context_id,kind,system,text\nc1,context,,hi\nc2,context,,yo\nc1,context,,again\n",
        "row 4, field 'context_id': duplicate context id 'c1' (first at row 2)",
    ),
    "duplicate_system": (
        "context_id,kind,system,text\nc1,context,,hi\nc1,response,a,x\nc1,response,a,y\n",
        "row 4, field 'system': duplicate system 'a'",
    ),
    "no_turns": ("context_id,kind,system,text\nc1,response,a,x\n", "row 2: a context needs at least one"),
    "wrong_field_count": ("context_id,kind,text\nc1,context,hi,extra\n", "row 2: expected 3 fields, found 4"),
    "broken_meta": ("context_id,kind,text,meta\nc1,context,hi,{oops\n", "row 2, field 'meta': broken JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD_CSV_DATASETS))
def test_import_dataset_rejects_bad_csv_and_writes_nothing(tmp_path, db, case):
    content, message = BAD_CSV_DATASETS[case]
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError) as error:
        import_dataset(path)
    assert message in str(error.value)
    assert_nothing_written()


# --- bad ratings: clear message, nothing written -------------------------------------

BAD_RATINGS = {
    "broken_json": ('{"context_id": "c1", "system": "hred", "worker": "w1", "score": 4\n', "line 1: broken JSON"),
    "missing_score": ('{"context_id": "c1", "system": "hred", "worker": "w1"}\n', "line 1, field 'score': missing"),
    "missing_worker": ('{"context_id": "c1", "system": "hred", "score": 3}\n', "line 1, field 'worker': missing"),
    "score_above_scale": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 3}\n'
        '{"context_id": "c2", "system": "hred", "worker": "w1", "score": 6}\n',
        "line 2, field 'score': 6 is outside the survey's scale 1-5",
    ),
    "score_below_scale": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 0}\n',
        "line 1, field 'score': 0 is outside the survey's scale 1-5",
    ),
    "score_not_a_number": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": "good"}\n',
        "line 1, field 'score': must be a whole number",
    ),
    "score_fraction": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 3.5}\n',
        "line 1, field 'score': 3.5 is not a whole number",
    ),
    "unknown_context": (
        '{"context_id": "c9", "system": "hred", "worker": "w1", "score": 3}\n',
        "line 1, field 'context_id': unknown context 'c9'",
    ),
    "unknown_system": (
        '{"context_id": "c1", "system": "gpt", "worker": "w1", "score": 3}\n',
        "line 1, field 'system': unknown system 'gpt'",
    ),
    "unknown_field": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 3, "scroe": 4}\n',
        "line 1, field 'scroe': unknown field",
    ),
    "duplicate_rating": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 3}\n'
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 4, "aspect": "overall"}\n',
        "line 2: worker 'w1' already rated system 'hred' on context 'c1' for aspect 'overall' (line 1)",
    ),
    "bad_aspect": (
        '{"context_id": "c1", "system": "hred", "worker": "w1", "score": 3, "aspect": "two words"}\n',
        "line 1, field 'aspect'",
    ),
    "empty_file": ("", "the file is empty"),
}


@pytest.fixture
def small_study(tmp_path, db):
    return import_dataset(write_jsonl(tmp_path / "small.jsonl", SMALL_DATASET))


@pytest.mark.parametrize("case", sorted(BAD_RATINGS))
def test_import_ratings_rejects_bad_input_and_writes_nothing(tmp_path, small_study, case):
    content, message = BAD_RATINGS[case]
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError) as error:
        import_ratings(path)
    assert message in str(error.value)
    assert Survey.objects.count() == 0
    assert Rating.objects.count() == 0
    assert Annotator.objects.count() == 0


def test_import_ratings_rejects_a_file_that_is_not_utf8(tmp_path, small_study):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"context_id": "c1", "system": "hred", "worker": "J\xfcrgen", "score": 3}\n')
    with pytest.raises(CommandError, match="line 1: the file is not UTF-8"):
        import_ratings(path)
    assert Survey.objects.count() == 0


def test_import_ratings_rejects_bad_csv_rows(tmp_path, small_study):
    path = tmp_path / "bad.csv"
    path.write_text("context_id,system,worker,score\nc1,hred,w1,4\nc1,human,w1,five\n", encoding="utf-8")
    with pytest.raises(CommandError, match="row 3, field 'score': 'five' is not a whole number"):
        import_ratings(path)
    assert Rating.objects.count() == 0


def test_import_ratings_rejects_an_unknown_dataset(tmp_path, db):
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        import_ratings(write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS), "nope")


def test_import_ratings_rejects_a_survey_name_already_taken(tmp_path, small_study):
    path = write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS)
    import_ratings(path, "study", "--survey", "taken")
    with pytest.raises(CommandError, match="a survey named 'taken' already exists"):
        import_ratings(path, "study", "--survey", "taken")
    assert Rating.objects.count() == len(SMALL_RATINGS)


def test_import_ratings_rejects_an_empty_scale(tmp_path, small_study):
    with pytest.raises(CommandError, match="the scale 5-5 is empty"):
        import_ratings(write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS), "study", "--scale-min", "5")


def test_import_services_raise_data_import_error_with_line_and_field(db):
    with pytest.raises(DataImportError) as error:
        dataset_import(file=b'{"context_id": "x", "context": ["hi"], "responses": 3}\n', name="s", fmt="jsonl")
    assert (error.value.line, error.value.field) == (1, "responses")
    dataset = dataset_import(file=json.dumps(SMALL_DATASET[0]).encode(), name="s", fmt="jsonl")
    with pytest.raises(DataImportError) as error:
        ratings_import(file=b'{"context_id": "c1", "system": "x", "worker": "w", "score": 1}', dataset=dataset)
    assert (error.value.line, error.value.field) == (1, "system")
    assert Survey.objects.count() == 0


def test_import_dataset_exits_non_zero_with_the_message_on_stderr(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"context_id": "c1", "context": ["hi"]}\n', encoding="utf-8")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "manage.py", "import_dataset", str(path), "--name", "x"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "line 1, field 'responses': missing" in result.stderr
