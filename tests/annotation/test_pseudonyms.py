"""Pseudonymised exports: no real worker id of any provider in the bytes of an export meant to be
shared (ratings JSONL/CSV, the report's JSON, CSV tables, zip members, LaTeX, the report page);
the same worker is the same pseudonym in every export; a pseudonymised ratings file re-imports to
the same correlations."""

import io
import json
import random
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.models import Report
from analysis.services.build import report_build
from annotation.models import Annotator, Dataset, Response, Survey
from annotation.selectors.pseudonyms import label_map, pseudonym_map, scrub, scrub_report
from scoring.models import MetricScore
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db

# One worker per provider, written as the platforms write them.
WORKERS = {
    "5f1a2b3c4d5e6f7a8b9c0d1e": "prolific",
    "A2XKQ9ZLM0PQRS": "mturk",
    "rater-alice": "local",
    "cr-participant-0042": "link",
}
SYSTEMS = ("hred", "seq2seq", "human")


def dataset_records(n_contexts=12):
    return [
        {
            "context_id": f"c{i}",
            "context": [{"speaker": "A", "text": f"Question number {i}?"}],
            "references": [f"A reference answer {i}"],
            "responses": [
                {"system": system, "text": " ".join(["word"] * (1 + (i * (j + 2)) % 7))}
                for j, system in enumerate(SYSTEMS)
            ],
        }
        for i in range(n_contexts)
    ]


def rating_records(records, workers, seed=7):
    rng = random.Random(seed)
    out = []
    for record in records:
        for response in record["responses"]:
            quality = len(response["text"].split())  # 1..7 words: the "true" quality
            for worker in workers:
                score = min(5, max(1, round(1 + quality * 4 / 7 + rng.choice((-1, 0, 0, 1)))))
                out.append({"context_id": record["context_id"], "system": response["system"], "worker": worker,
                            "score": score})  # fmt: skip
    return out


def add_length_metric(dataset):
    MetricScore.objects.bulk_create(
        MetricScore(response=response, metric="length", version="test", value=float(len(response.text.split())))
        for response in Response.objects.filter(context__dataset=dataset)
    )


@pytest.fixture
def study(researcher, settings, tmp_path):
    """A dataset rated by one worker of each provider in two surveys (the second by three of them)."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path
    records = dataset_records()
    dataset = load_dataset_records(records=records, name="pseudo", owner=researcher)
    first = load_rating_records(records=rating_records(records, WORKERS), dataset=dataset, survey_name="wave-1",
                                owner=researcher)  # fmt: skip
    later = list(WORKERS)[1:]
    load_rating_records(records=rating_records(records, later, seed=8), dataset=dataset, survey_name="wave-2",
                        owner=researcher)  # fmt: skip
    for worker, provider in WORKERS.items():
        Annotator.objects.filter(worker_id=worker).update(provider=provider)
    add_length_metric(dataset)
    return dataset, first


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def assert_no_real_id(blob):
    text = blob.decode("utf-8") if isinstance(blob, bytes) else blob
    for worker in WORKERS:
        assert worker not in text, f"real worker id {worker} in a pseudonymised export"


def zip_members(content):
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


# --- the mapping ----------------------------------------------------------------------------


def test_scrub_replaces_labels_values_and_keys_and_leaves_other_strings_alone():
    labels = {"W1": "A2", "mturk:W1": "A5", "bob": "A1"}
    data = {"worker": "W1", "pair": ["mturk:W1", "bob"], "bob": 3, "method": "df = n - 3", "note": "W1 too fast"}
    assert scrub(data, labels) == {"worker": "A2", "pair": ["A5", "A1"], "A1": 3, "method": "df = n - 3",
                                   "note": "W1 too fast"}  # fmt: skip
    assert scrub(data, labels, in_text=True)["note"] == "A2 too fast"
    assert scrub("bobby and W10", labels, in_text=True) == "bobby and W10"


def test_pseudonyms_are_numbered_by_first_rating_across_surveys(study):
    dataset, _ = study
    by_worker = {
        a.worker_id: p for a_pk, p in pseudonym_map(dataset=dataset).items() for a in [Annotator.objects.get(pk=a_pk)]
    }
    assert by_worker == {worker: f"A{n}" for n, worker in enumerate(WORKERS, start=1)}
    assert label_map(dataset=dataset)["prolific:5f1a2b3c4d5e6f7a8b9c0d1e"] == "A1"


# --- ratings files ----------------------------------------------------------------------------


def test_export_ratings_writes_pseudonyms_by_default_in_jsonl_and_csv(study):
    exported = run("export_ratings", "--dataset", "pseudo")
    assert_no_real_id(exported)
    assert {json.loads(line)["worker"] for line in exported.splitlines()} == {"A1", "A2", "A3", "A4"}
    csv_text = run("export_ratings", "--dataset", "pseudo", "--format", "csv", "--pseudonymise")
    assert_no_real_id(csv_text)
    assert csv_text.splitlines()[1].split(",")[2] == "A1"


def test_the_same_worker_has_the_same_pseudonym_in_two_exports(study):
    whole = [json.loads(line) for line in run("export_ratings", "--dataset", "pseudo").splitlines()]
    wave2 = [
        json.loads(line) for line in run("export_ratings", "--dataset", "pseudo", "--survey", "wave-2").splitlines()
    ]
    real2 = [json.loads(line) for line in
             run("export_ratings", "--dataset", "pseudo", "--survey", "wave-2", "--real-ids").splitlines()]  # fmt: skip
    # wave-2 has no Prolific worker, yet the MTurk worker is A2 there too, as in the whole file.
    assert {r["worker"] for r in wave2} == {"A2", "A3", "A4"}
    assert {(p["worker"], r["worker"]) for p, r in zip(wave2, real2, strict=True)} == {
        ("A2", "A2XKQ9ZLM0PQRS"), ("A3", "rater-alice"), ("A4", "cr-participant-0042")
    }  # fmt: skip
    assert {r["worker"] for r in whole if r.get("survey") == "wave-2"} == {"A2", "A3", "A4"}


def test_real_ids_export_warns_that_it_carries_real_ids(study):
    err = io.StringIO()
    call_command("export_ratings", "--dataset", "pseudo", "--real-ids", stdout=io.StringIO(), stderr=err)
    assert "real worker ids" in err.getvalue()


def test_pseudonymised_ratings_reimport_to_the_same_correlations(study, tmp_path):
    dataset, _ = study
    (tmp_path / "d.jsonl").write_text(run("export_dataset", "--dataset", "pseudo"), encoding="utf-8")
    run("import_dataset", str(tmp_path / "d.jsonl"), "--name", "shared")
    for wave in ("wave-1", "wave-2"):  # one file per survey: pseudonyms are shared across them
        exported = run("export_ratings", "--dataset", "pseudo", "--survey", wave, "--format", "csv")
        (tmp_path / f"{wave}.csv").write_text(exported, encoding="utf-8")
        run("import_ratings", str(tmp_path / f"{wave}.csv"), "--dataset", "shared", "--survey", wave)
    copy = Dataset.objects.get(name="shared")
    add_length_metric(copy)
    assert set(Annotator.objects.filter(ratings__survey__dataset=copy).values_list("worker_id", flat=True)) == {
        "A1", "A2", "A3", "A4"
    }  # fmt: skip
    original = report_build(dataset=dataset, n_boot=50, apply_exclusions=False)
    again = report_build(dataset=copy, n_boot=50, apply_exclusions=False)
    assert original["n_ratings"] == again["n_ratings"] == 12 * 3 * 7 > 0
    for before, after in zip(original["utterance_level"], again["utterance_level"], strict=True):
        assert before["metric"] == after["metric"] == "length"
        assert before["pearson"] == pytest.approx(after["pearson"]) and before["pearson"] > 0.5
        assert before["spearman"] == pytest.approx(after["spearman"])
    assert original["agreement"]["median_kappa"] == pytest.approx(again["agreement"]["median_kappa"])


def test_scrub_report_leaves_no_real_id_in_a_computed_report(study):
    dataset, _ = study
    data = report_build(dataset=dataset, n_boot=50)
    assert any(worker in json.dumps(data) for worker in WORKERS)  # the report names workers...
    assert_no_real_id(json.dumps(scrub_report(data, label_map(dataset=dataset))))  # ...its shared form never


# --- web downloads ----------------------------------------------------------------------------


def test_dataset_and_survey_rating_downloads_are_pseudonymised_and_real_ids_are_marked(researcher_client, study):
    dataset, survey = study
    for fmt in ("jsonl", "csv"):
        response = researcher_client.get(reverse("annotation:dataset_download", args=[dataset.pk, "ratings", fmt]))
        assert response["X-RateLab-Worker-Ids"] == "pseudonymised"
        assert_no_real_id(response.content)
    survey_file = researcher_client.get(reverse("annotation:survey_export", args=[survey.pk]))
    assert_no_real_id(survey_file.content)
    raw = researcher_client.get(
        reverse("annotation:dataset_download", args=[dataset.pk, "ratings", "jsonl"]) + "?ids=real"
    )
    assert raw["X-RateLab-Worker-Ids"] == "real" and "real-worker-ids" in raw["Content-Disposition"]
    assert all(worker in raw.content.decode() for worker in WORKERS)


def test_real_ids_are_for_the_owner_only(client, admin_user, other_researcher, study):
    dataset, survey = study
    client.force_login(admin_user)  # staff may read every study, but not its workers' real ids
    plain = reverse("annotation:dataset_download", args=[dataset.pk, "ratings", "jsonl"])
    assert client.get(plain).status_code == 200
    assert client.get(plain + "?ids=real").status_code == 404
    assert client.get(reverse("annotation:survey_export", args=[survey.pk]) + "?ids=real").status_code == 404
    client.force_login(other_researcher)
    assert client.get(plain).status_code == 404


def test_report_downloads_and_page_carry_no_real_worker_id(
    researcher_client, client, admin_user, study, django_capture_on_commit_callbacks
):
    dataset, _ = study
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(reverse("analysis:dataset_report", args=[dataset.pk]))
    report = Report.objects.get(dataset=dataset, survey=None)
    assert any(worker in json.dumps(report.data) for worker in WORKERS)

    def export(fmt, query=""):
        return researcher_client.get(reverse("analysis:report_export", args=[report.pk, fmt]) + query)

    page = researcher_client.get(reverse("analysis:dataset_report", args=[dataset.pk]))
    assert_no_real_id(page.content)
    table = researcher_client.get(reverse("analysis:report_table", args=[report.pk, "agreement_annotators"]))
    assert_no_real_id(table.content)
    assert "A1" in table.content.decode()
    as_json = export("json")
    assert_no_real_id(as_json.content)
    assert json.loads(as_json.content)["worker_ids"] == "pseudonymised"
    assert {row["worker"] for row in json.loads(as_json.content)["agreement"]["annotators"]} == {"A1", "A2", "A3", "A4"}
    assert_no_real_id(export("latex").content)
    for name in ("agreement_annotators", "agreement_pairs"):
        assert_no_real_id(export("csv", f"?table={name}").content)
    members = zip_members(export("zip").content)
    assert "agreement_annotators.csv" in members
    for content in members.values():
        assert_no_real_id(content)

    raw = export("zip", "?ids=real")
    assert "real-worker-ids" in raw["Content-Disposition"] and raw["X-RateLab-Worker-Ids"] == "real"
    raw_members = zip_members(raw.content)
    assert b"CARRIES REAL WORKER IDS" in raw_members["README.txt"]
    assert b"5f1a2b3c4d5e6f7a8b9c0d1e" in raw_members["report.json"]
    client.force_login(admin_user)
    assert client.get(reverse("analysis:report_export", args=[report.pk, "json"]) + "?ids=real").status_code == 404
    assert client.get(reverse("analysis:report_export", args=[report.pk, "json"])).status_code == 200


def test_a_prolific_survey_name_is_not_mistaken_for_a_worker(study):
    dataset, survey = study
    Survey.objects.filter(pk=survey.pk).update(name="rater-alice-wave")
    assert scrub({"survey": "rater-alice-wave"}, label_map(dataset=dataset), in_text=True) == {
        "survey": "rater-alice-wave"
    }


def test_the_rules_own_reasons_keep_their_numbers_when_workers_are_named_by_numbers():
    # Imported files often name their workers 1, 2, 3: only people's free text is searched for them.
    labels = {"1": "A1", "2": "A2", "imported:1": "A1", "imported:2": "A2"}
    kappa = {"rule": "kappa", "detail": "mean kappa -0.247 over 2 pairs, below 0.2"}
    manual = {"rule": "manual", "detail": "2 clicked through"}
    report = {
        "agreement": {
            "annotators": [
                {"worker": "1", "reasons": [kappa], "auto_reasons": [kappa], "note": ""},
                {"worker": "2", "reasons": [manual], "auto_reasons": [], "note": "2 clicked through, as did 1"},
            ],
            "pairs": [{"a": "1", "b": "2"}],
        },
        "method": {"williams": "df = n - 3"},
    }
    scrubbed = scrub_report(report, labels)["agreement"]
    first, second = scrubbed["annotators"]
    assert first["worker"] == "A1" and first["reasons"][0]["detail"] == "mean kappa -0.247 over 2 pairs, below 0.2"
    assert second["reasons"][0]["detail"] == "A2 clicked through"
    assert second["note"] == "A2 clicked through, as did A1"
    assert scrubbed["pairs"] == [{"a": "A1", "b": "A2"}]
