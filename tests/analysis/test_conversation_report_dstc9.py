"""The Conversations section on DSTC9's interactive evaluation (four systems, one rating per aspect
per dialogue): imported with the converter, metrics computed by the command, report built by the
command, figures checked against the raw release."""

import io
import itertools
import json
import statistics

import pytest
from django.core.management import call_command

from annotation.importing.dstc9 import convert, write_jsonl
from annotation.models import Dataset
from scoring.models import ConversationMetricScore

pytestmark = [pytest.mark.shared_data, pytest.mark.django_db]

SYSTEMS = ("chatbot1", "chatbot2", "chatbot3", "chatbot4")


@pytest.fixture
def raw(shared_data):
    folder = shared_data / "dstc9_interactive"
    return {s: json.loads((folder / f"{s}.json").read_text(encoding="utf-8")) for s in SYSTEMS}


@pytest.fixture
def report(shared_data, tmp_path, researcher, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 200
    settings.ANALYSIS_PERMUTATIONS = 200
    conversations, ratings = convert(shared_data / "dstc9_interactive")
    write_jsonl(conversations, tmp_path / "c.jsonl")
    write_jsonl(ratings, tmp_path / "r.jsonl")
    out = io.StringIO()
    call_command("import_conversations", str(tmp_path / "c.jsonl"), "--name", "dstc9", "--owner", researcher.username,
                 stdout=out)  # fmt: skip
    call_command(
        "import_conversation_ratings", str(tmp_path / "r.jsonl"), "--dataset", "dstc9",
        "--scale", "overall=1-5", "--scale", "consistent=0-1", "--scale-min", "1", "--scale-max", "3", stdout=out,
    )  # fmt: skip
    call_command("compute_conversation_metrics", "--dataset", "dstc9", "--owner", researcher.username, stdout=out)
    exported = io.StringIO()
    call_command("report", "--dataset", "dstc9", "--owner", researcher.username, "--format", "json", stdout=exported)
    return json.loads(exported.getvalue())["conversations"]


def metrics_are_stored_once_per_conversation_and_metric(report):
    dataset = Dataset.objects.get(name="dstc9")
    assert ConversationMetricScore.objects.filter(conversation__dataset=dataset).count() == 2360 * 6


def the_json_holds_systems_and_metrics_and_no_comparisons(report, raw=None):
    assert set(report["systems"][0]) >= {"system", "aspect", "mean", "ci_low", "ci_high", "n"}
    assert set(report["metrics"][0]) >= {"metric", "aspect", "pearson", "spearman", "kendall", "n"}
    assert report["acute"] == []  # DSTC9 released no side-by-side comparisons


def n_and_mean_per_system_are_the_release_counts_and_means(report, raw):
    overall = {row["system"]: row for row in report["systems"] if row["aspect"] == "overall"}
    for system, items in raw.items():
        released = [item["human (overall)"] for item in items if isinstance(item["human (overall)"], int)]
        assert overall[system]["n"] == len(released)
        assert overall[system]["mean"] == pytest.approx(statistics.mean(released))
        assert overall[system]["ci_low"] < overall[system]["mean"] < overall[system]["ci_high"]
    consistent = {row["system"]: row for row in report["systems"] if row["aspect"] == "consistent"}
    for system, items in raw.items():
        released = [item["consistent"] for item in items if isinstance(item["consistent"], int)]
        assert consistent[system]["n"] == len(released)


def the_overall_ranking_follows_the_release_means(report, raw):
    # The data's README gives no official ranking: the order is the released means', best first.
    means = {s: statistics.mean(item["human (overall)"] for item in items) for s, items in raw.items()}
    ranking = [row for row in report["ranking"] if row["aspect"] == "overall" and row["kind"] == "whole"]
    assert [row["system"] for row in ranking] == sorted(means, key=lambda s: -means[s])
    assert ranking[0]["cluster"] == 1
    assert all(b["cluster"] >= a["cluster"] for a, b in itertools.pairwise(ranking))


def a_single_rater_gives_no_agreement_figure_but_says_so(report):
    rows = [row for row in report["agreement"] if row["kind"] == "whole"]
    assert len(rows) == 11
    for row in rows:
        assert row["alpha"] is None and row["split_half"] is None
        assert "single rater" in row["note"]


def the_metric_correlations_cover_every_aspect_and_conversation(report, raw):
    overall = [row for row in report["metrics"] if row["aspect"] == "overall"]
    assert {row["metric"] for row in overall} == {"system_turns", "mean_turn_length", "distinct_1", "distinct_2",
                                                 "self_repetition", "question_rate"}  # fmt: skip
    turns = next(row for row in overall if row["metric"] == "system_turns")
    assert turns["n"] == sum(len(items) for items in raw.values())
    assert -1 <= turns["pearson"] <= 1 and turns["pearson_ci_low"] <= turns["pearson"] <= turns["pearson_ci_high"]
    best = max(overall, key=lambda row: row["pearson"])
    assert best["cluster"] == 1 and all(isinstance(row["cluster"], int) for row in overall)
    system_level = [row for row in report["metrics_system"] if row["aspect"] == "overall"]
    assert all(row["n"] == 4 for row in system_level)


def test_the_report_of_the_release_matches_the_raw_files(report, raw):
    """One import and report (about 20 s on the shared machine), every check on it."""
    metrics_are_stored_once_per_conversation_and_metric(report)
    the_json_holds_systems_and_metrics_and_no_comparisons(report)
    n_and_mean_per_system_are_the_release_counts_and_means(report, raw)
    the_overall_ranking_follows_the_release_means(report, raw)
    a_single_rater_gives_no_agreement_figure_but_says_so(report)
    the_metric_correlations_cover_every_aspect_and_conversation(report, raw)
