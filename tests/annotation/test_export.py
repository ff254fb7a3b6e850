import io
import json
from email.message import Message

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Dataset, Response, Survey
from annotation.services.extensions import points as extensions
from tests import shared_loaders
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS, write_jsonl
from tests.factories import load_dataset_records, load_rating_records


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def jsonl(text):
    return [json.loads(line) for line in text.split("\n") if line]


def by_system(records):
    """Records with responses in a fixed order: export sorts them by system name."""
    return [{**r, "responses": sorted(r["responses"], key=lambda x: x["system"])} for r in records]


def rating_keys(records):
    return sorted((r["context_id"], r["system"], r["worker"], r.get("aspect", "overall"), r["score"]) for r in records)


@pytest.fixture
def small_study(tmp_path, db):
    run("import_dataset", str(write_jsonl(tmp_path / "d.jsonl", SMALL_DATASET)), "--name", "study")
    run("import_ratings", str(write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS)), "--dataset", "study")
    return Dataset.objects.get(name="study")


@pytest.mark.shared_data
def test_usr_personachat_survives_import_export_import(shared_data, tmp_path, db):
    records, ratings = shared_loaders.usr_personachat(shared_data)
    run("import_dataset", str(write_jsonl(tmp_path / "d.jsonl", records)), "--name", "usr")
    run("import_ratings", str(write_jsonl(tmp_path / "r.jsonl", ratings)), "--dataset", "usr")
    exported = run("export_dataset", "--dataset", "usr")
    assert jsonl(exported) == by_system(records)
    exported_ratings = run("export_ratings", "--dataset", "usr", "--real-ids")
    assert rating_keys(jsonl(exported_ratings)) == rating_keys(ratings)

    (tmp_path / "again.jsonl").write_text(exported, encoding="utf-8")
    (tmp_path / "again-r.jsonl").write_text(exported_ratings, encoding="utf-8")
    run("import_dataset", str(tmp_path / "again.jsonl"), "--name", "usr2")
    run("import_ratings", str(tmp_path / "again-r.jsonl"), "--dataset", "usr2")
    assert run("export_dataset", "--dataset", "usr2") == exported
    assert run("export_ratings", "--dataset", "usr2", "--real-ids") == exported_ratings


def test_round_trip_keeps_speakers_meta_references_and_aspects(small_study, tmp_path):
    exported = run("export_dataset", "--dataset", "study")
    assert jsonl(exported) == by_system(SMALL_DATASET)
    ratings = run("export_ratings", "--dataset", "study", "--real-ids")
    assert rating_keys(jsonl(ratings)) == rating_keys(SMALL_RATINGS)
    (tmp_path / "e.jsonl").write_text(exported, encoding="utf-8")
    (tmp_path / "e-r.jsonl").write_text(ratings, encoding="utf-8")
    run("import_dataset", str(tmp_path / "e.jsonl"), "--name", "copy")
    run("import_ratings", str(tmp_path / "e-r.jsonl"), "--dataset", "copy")
    assert run("export_dataset", "--dataset", "copy") == exported
    assert run("export_ratings", "--dataset", "copy", "--real-ids") == ratings
    assert list(Survey.objects.get(dataset__name="copy").aspects.values_list("key", flat=True)) == [
        "overall",
        "topicality",
    ]


def test_csv_round_trip_is_lossless(small_study, tmp_path):
    out = tmp_path / "study.csv"
    run("export_dataset", "--dataset", "study", "--format", "csv", "--output", str(out))
    ratings_out = tmp_path / "ratings.csv"
    run("export_ratings", "--dataset", "study", "--format", "csv", "--output", str(ratings_out), "--real-ids")
    assert out.read_text(encoding="utf-8").splitlines()[0] == "context_id,kind,speaker,system,text,meta"
    run("import_dataset", str(out), "--name", "copy")
    run("import_ratings", str(ratings_out), "--dataset", "copy")
    assert run("export_dataset", "--dataset", "copy") == run("export_dataset", "--dataset", "study")
    assert run("export_ratings", "--dataset", "copy", "--real-ids") == run(
        "export_ratings", "--dataset", "study", "--real-ids"
    )


def test_export_writes_to_a_file_with_output(small_study, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run("export_dataset", "--dataset", "study", "--output", str(out)) == ""
    assert [r["context_id"] for r in jsonl(out.read_text(encoding="utf-8"))] == ["c1", "c2"]


def test_export_adds_registered_response_extras_as_metrics_which_import_ignores(small_study, tmp_path, monkeypatch):
    monkeypatch.setattr(extensions, "_response_extras", [])

    def lengths(dataset, response_ids):
        return {
            pk: {"metrics": {"length": len(text)}}
            for pk, text in Response.objects.filter(pk__in=response_ids).values_list("pk", "text")
        }

    extensions.register_response_extras(lengths)
    exported = jsonl(run("export_dataset", "--dataset", "study"))
    assert exported[1]["responses"][0] == {"system": "hred", "text": "Yes.", "metrics": {"length": 4}}
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(r) + "\n" for r in exported), encoding="utf-8")
    run("import_dataset", str(tmp_path / "e.jsonl"), "--name", "copy")
    copied = Response.objects.get(context__dataset__name="copy", context__external_id="c1", system__name="hred")
    assert copied.meta == {"temperature": 0.7}


def test_export_writes_metric_scores_under_one_metrics_key_which_import_ignores(small_study, tmp_path):
    """Browser walk F22: the JSONL download carried `"metrics": {"metrics": {...}}`; the README
    documents `"metrics": {"bleu1": ...}`. Scoring's real provider, through the command and the page."""
    from scoring.models import MetricScore

    response = Response.objects.get(context__dataset=small_study, context__external_id="c1", system__name="hred")
    MetricScore.objects.create(response=response, metric="bleu1", version="t", value=0.25)
    MetricScore.objects.create(response=response, metric="adem:m", version="t", value=3.5)
    exported = jsonl(run("export_dataset", "--dataset", "study"))
    assert exported[0]["responses"][0]["metrics"] == {"adem:m": 3.5, "bleu1": 0.25}
    assert "metrics" not in exported[0]["responses"][1]  # a response with no score: no key
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in exported), encoding="utf-8")
    run("import_dataset", str(tmp_path / "m.jsonl"), "--name", "copy-m")
    copied = Response.objects.get(context__dataset__name="copy-m", context__external_id="c1", system__name="hred")
    assert copied.meta == {"temperature": 0.7}
    assert not MetricScore.objects.filter(response=copied).exists()


def test_export_ratings_of_several_surveys_names_each_survey(small_study, tmp_path):
    run(
        "import_ratings",
        str(write_jsonl(tmp_path / "r.jsonl", SMALL_RATINGS[:2])),
        "--dataset",
        "study",
        "--survey",
        "second",
    )
    records = jsonl(run("export_ratings", "--dataset", "study", "--real-ids"))
    assert len(records) == len(SMALL_RATINGS) + 2
    assert {r["survey"] for r in records} == {"study-imported", "second"}
    only_second = jsonl(run("export_ratings", "--dataset", "study", "--survey", "second", "--real-ids"))
    assert rating_keys(only_second) == rating_keys(SMALL_RATINGS[:2])
    assert all("survey" not in r for r in only_second)


def test_round_trip_keeps_unusual_characters(tmp_path, db):
    text = 'line\u2028separator, form\x0cfeed, tab\t, quote " and comma, emoji \U0001f600, \r\nnewline'
    records = [
        {
            "context_id": "ü-1",
            "context": [{"speaker": "Zoë", "text": text}],
            "references": [text],
            "responses": [{"system": "sys,1", "text": text}],
        }
    ]
    run("import_dataset", str(write_jsonl(tmp_path / "d.jsonl", records)), "--name", "odd")
    exported = run("export_dataset", "--dataset", "odd")
    assert jsonl(exported) == records
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"odd.{fmt}"
        run("export_dataset", "--dataset", "odd", "--format", fmt, "--output", str(out))
        run("import_dataset", str(out), "--name", f"odd-{fmt}")
        assert run("export_dataset", "--dataset", f"odd-{fmt}") == exported


# --- download file names (Content-Disposition) -----------------------------------------

HOSTILE_NAMES = [
    "study\"; filename*=utf-8''evil.exe; x=\"1",
    "line\r\nSet-Cookie: stolen=1",
    "back\\slash/and/slashes",
    "Zoë's study",
]


def download_header(client, url):
    response = client.get(url)
    assert response.status_code == 200
    header = response["Content-Disposition"]
    assert "\r" not in header and "\n" not in header
    return header


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_downloads_are_named_after_the_dataset_with_one_filename_parameter(client, researcher, name):
    dataset = load_dataset_records(records=SMALL_DATASET, name=name, owner=researcher)
    survey = load_rating_records(
        records=SMALL_RATINGS, dataset=dataset, survey_name=name + " ratings", owner=researcher
    )
    client.force_login(researcher)
    urls = {
        f"{name}-dataset.csv": reverse("annotation:dataset_download", args=[dataset.pk, "dataset", "csv"]),
        f"{name}-ratings.jsonl": reverse("annotation:dataset_download", args=[dataset.pk, "ratings", "jsonl"]),
        f"{name} ratings-ratings.jsonl": reverse("annotation:survey_export", args=[survey.pk]),
    }
    for expected, url in urls.items():
        parsed = Message()
        parsed["Content-Disposition"] = download_header(client, url)
        params = parsed.get_params(header="Content-Disposition")
        assert [key for key, _ in params] == ["attachment", params[1][0]]
        assert params[1][0] in ("filename", "filename*")
        # What a browser would save: the name, with path separators and control characters as "_".
        shown = parsed.get_filename()
        assert shown == expected.replace("\r\n", "_").replace("/", "_").replace("\\", "_")
