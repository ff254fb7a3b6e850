"""The report's Conversations section on a study small enough to work out by hand: five
conversations of two systems, whole-conversation and per-turn ratings, ACUTE comparisons and the
stored conversation metrics."""

import io
import math
import re

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy import stats as scipy_stats

from analysis.sections import conversations as conversations_section
from analysis.services.build import report_build
from analysis.services.exports import to_csv, to_latex
from analysis.services.freshness import report_change_marker, report_fingerprint
from analysis.stats.conversations import group_means, ranked_clusters
from annotation.services.conversation_answers import conversation_judgements_import, conversation_ratings_import
from annotation.services.conversations import conversations_import
from scoring.models import ConversationMetricScore
from tests.annotation.conversation_files import conversation, jsonl

pytestmark = pytest.mark.django_db
QUESTION = "Who would you prefer to talk to for a long conversation?"

# (conversation, system, number of turns): user first, so the system speaks at turns 1, 3, 5.
CONVERSATIONS = [("a1", "alpha", 4), ("a2", "alpha", 2), ("a3", "alpha", 6), ("b1", "beta", 4), ("b2", "beta", 2)]
OVERALL = [("a1", "w1", 5), ("a1", "w2", 3), ("a2", "w1", 4), ("a3", "w1", 2), ("a3", "w2", 2), ("b1", "w1", 1),
           ("b2", "w1", 3), ("b2", "w2", 1)]  # fmt: skip
# Per conversation means: a1 4, a2 4, a3 2 (alpha: 10/3); b1 1, b2 2 (beta: 1.5).
REPETITIVE = [("a1", 1, "w1", 1), ("a1", 3, "w1", 0), ("a2", 1, "w1", 0), ("a2", 1, "w2", 1), ("b1", 1, "w1", 1),
              ("b1", 3, "w1", 1), ("b2", 1, "w1", 1)]  # fmt: skip
# alpha: 2 yes of 4 ratings; beta: 3 of 3.
SENSIBLE = [("a1", 1, "w1", 3), ("a1", 3, "w1", 1), ("a2", 1, "w1", 3), ("a3", 1, "w1", 2), ("b1", 1, "w1", 1),
            ("b1", 3, "w1", 2)]  # fmt: skip
# Per conversation mean turn / worst turn: a1 2/1, a2 3/3, a3 2/2, b1 1.5/1.
JUDGEMENTS = [("a1", "b1", "w1", "a"), ("a2", "b2", "w1", "a"), ("b1", "a3", "w2", "b"), ("a1", "b2", "w2", "tie")]


@pytest.fixture
def study(researcher, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 200
    texts = ["hello there", "hi! do you like cats?", "yes i do", "cats are great, cats are great", "why?", "because"]
    dataset = conversations_import(
        file=jsonl([conversation(c, s, texts[:n]) for c, s, n in CONVERSATIONS]), name="tiny", owner=researcher
    )
    lines = [{"conversation_id": c, "worker": w, "aspect": "overall", "score": s} for c, w, s in OVERALL]
    lines += [{"conversation_id": c, "turn": t, "worker": w, "aspect": "repetitive", "score": s}
              for c, t, w, s in REPETITIVE]  # fmt: skip
    lines += [{"conversation_id": c, "turn": t, "worker": w, "aspect": "sensible", "score": s}
              for c, t, w, s in SENSIBLE]  # fmt: skip
    conversation_ratings_import(file=jsonl(lines), dataset=dataset, scales={"overall": (1, 5), "repetitive": (0, 1),
                                                                          "sensible": (1, 3)})  # fmt: skip
    comparisons = [{"conversation_a": a, "conversation_b": b, "worker": w, "winner": x, "question": QUESTION}
                   for a, b, w, x in JUDGEMENTS]  # fmt: skip
    conversation_judgements_import(file=jsonl(comparisons), dataset=dataset)
    call_command("compute_conversation_metrics", "--dataset", "tiny", stdout=io.StringIO())
    return dataset


@pytest.fixture
def part(study):
    return report_build(dataset=study)["conversations"]


def _row(rows, **match):
    return next(row for row in rows if all(row[k] == v for k, v in match.items()))


def test_each_system_mean_is_over_its_conversations_with_n_conversations(part):
    alpha = _row(part["systems"], system="alpha", aspect="overall")
    beta = _row(part["systems"], system="beta", aspect="overall")
    assert (alpha["mean"], alpha["n"]) == (pytest.approx(10 / 3), 3)
    assert (beta["mean"], beta["n"]) == (pytest.approx(1.5), 2)
    # The bootstrap draws conversations of the system: its interval lies between their extremes.
    assert 2 <= alpha["ci_low"] <= alpha["mean"] <= alpha["ci_high"] <= 4
    assert 1 <= beta["ci_low"] <= beta["ci_high"] <= 2


def test_the_bootstrap_interval_is_the_percentiles_of_resampled_means():
    values, groups = [4.0, 4.0, 2.0, 1.0, 2.0], ["alpha", "alpha", "alpha", "beta", "beta"]
    rows, _samples = group_means(values, groups, n_boot=500, seed=3)
    rng = np.random.default_rng(3)
    for name, own in (("alpha", np.array([4.0, 4.0, 2.0])), ("beta", np.array([1.0, 2.0]))):
        means = own[rng.integers(0, own.size, size=(500, own.size))].mean(axis=1)
        row = _row([{**r, "system": r["group"]} for r in rows], system=name)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))


def test_flag_rates_have_wilson_intervals(part):
    alpha = _row(part["flags"], system="alpha", aspect="repetitive")
    beta = _row(part["flags"], system="beta", aspect="repetitive")
    assert (alpha["flagged"], alpha["n"], alpha["rate"]) == (2, 4, 0.5)
    assert (beta["flagged"], beta["n"], beta["rate"]) == (3, 3, 1.0)
    z = scipy_stats.norm.ppf(0.975)
    for row in (alpha, beta):
        k, n = row["flagged"], row["n"]
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((centre - half, centre + half))
    assert not any(row["aspect"] == "repetitive" for row in part["turn_systems"])  # a flag is not averaged


def test_systems_apart_form_two_clusters_and_systems_alike_one():
    rng = np.random.default_rng(0)
    values = np.r_[rng.integers(4, 6, 40), rng.integers(1, 3, 40), rng.integers(1, 3, 40)].astype(float)
    groups = ["good"] * 40 + ["bad"] * 40 + ["also_bad"] * 40
    rows, samples = group_means(values, groups, n_boot=1000, seed=0)
    clusters, tests = ranked_clusters({r["group"]: r["mean"] for r in rows}, samples)
    assert clusters["good"] == 1 and clusters["bad"] == clusters["also_bad"] == 2
    good_vs_bad = _row(tests, a="good", b="bad")
    assert good_vs_bad["p"] == pytest.approx(1 / 1001)  # no resample puts "bad" above "good"


def test_acute_counts_wins_losses_and_ties_per_system_and_question(part):
    alpha = _row(part["acute"], system="alpha", question=QUESTION)
    beta = _row(part["acute"], system="beta", question=QUESTION)
    assert (alpha["wins"], alpha["losses"], alpha["ties"]) == (3, 0, 1)
    assert (beta["wins"], beta["losses"], beta["ties"]) == (0, 3, 1)
    assert alpha["win_rate"] == 1.0 and beta["win_rate"] == 0.0
    assert alpha["strength"] > 0 > beta["strength"] and alpha["strength"] == pytest.approx(-beta["strength"])
    assert part["acute"][0]["system"] == "alpha"  # best first
    assert set(alpha) >= {"system", "question", "wins", "losses", "ties", "strength", "ci_low", "ci_high"}


def test_metric_correlations_are_scipys_on_the_same_conversations(part):
    overall = {"a1": 4.0, "a2": 4.0, "a3": 2.0, "b1": 1.0, "b2": 2.0}
    system_turns = {c: n // 2 for c, _s, n in CONVERSATIONS}
    x = [system_turns[c] for c in sorted(overall)]
    y = [overall[c] for c in sorted(overall)]
    row = _row(part["metrics"], metric="system_turns", aspect="overall")
    assert row["n"] == 5
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(x, y).statistic)
    assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
    assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(x, y).statistic)
    assert row["pearson_p"] == pytest.approx(scipy_stats.pearsonr(x, y).pvalue)


def test_mean_and_worst_turn_are_correlated_with_the_overall_score(part):
    mean_turn = {"a1": 2.0, "a2": 3.0, "a3": 2.0, "b1": 1.5}
    worst_turn = {"a1": 1.0, "a2": 3.0, "a3": 2.0, "b1": 1.0}
    overall = [4.0, 4.0, 2.0, 1.0]
    for summary, values in (("mean", mean_turn), ("worst", worst_turn)):
        row = _row(part["turns_vs_overall"], aspect="sensible", summary=summary)
        assert row["n"] == 4
        assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(list(values.values()), overall).statistic)
    # For a yes/no aspect which answer is the worst is not known: its share only.
    assert [r["summary"] for r in part["turns_vs_overall"] if r["aspect"] == "repetitive"] == ["mean"]


def test_agreement_uses_the_level_of_each_scale(part):
    overall = _row(part["agreement"], kind="whole", aspect="overall")
    # a1 (5, 3), a3 (2, 2), b2 (3, 1): the items rated twice.
    matrix = np.array([[5, 2, 3], [3, 2, 1]], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert overall["level"] == "ordinal" and overall["n_items_shared"] == 3
    assert overall["alpha"] == pytest.approx(expected)
    assert _row(part["agreement"], kind="turn", aspect="repetitive")["level"] == "nominal"
    sensible = _row(part["agreement"], kind="turn", aspect="sensible")
    assert sensible["alpha"] is None and "single rater" in sensible["note"]  # no turn rated twice
    assert _row(part["agreement"], kind="acute", aspect=QUESTION)["level"] == "nominal"


def test_the_systems_filter_keeps_only_its_systems_and_says_so(study):
    part = report_build(dataset=study, systems=["alpha"])["conversations"]
    assert {row["system"] for row in part["systems"]} == {"alpha"}
    assert part["n_conversations"] == 3 and part["acute"] == []  # no comparison of two kept systems
    assert "systems alpha only" in part["population"]


def test_metrics_are_stored_once_per_conversation_and_rerun_replaces_them(study):
    assert ConversationMetricScore.objects.filter(conversation__dataset=study).count() == 5 * 6
    call_command("compute_conversation_metrics", "--dataset", "tiny", "--metric", "question_rate", stdout=io.StringIO())
    assert ConversationMetricScore.objects.filter(conversation__dataset=study).count() == 5 * 6


def test_csv_and_latex_exports_hold_the_sections_tables(study):
    data = report_build(dataset=study)
    header = to_csv(data, "conversation_systems").splitlines()[0]
    assert header == "system,aspect,mean,ci_low,ci_high,n"
    assert "alpha" in to_csv(data, "conversation_acute")
    assert "tab:conversation-systems" in to_latex(data) and "tab:conversation-acute" in to_latex(data)


def test_the_report_page_shows_the_section(study, researcher_client, django_capture_on_commit_callbacks, settings,
                                           tmp_path):  # fmt: skip
    settings.MEDIA_ROOT = tmp_path
    url = reverse("analysis:dataset_report", args=[study.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    for anchor in ("t-conversation_systems", "t-conversation_flags", "t-conversation_acute", "t-conversation_metrics"):
        assert f'id="{anchor}"' in body and f'href="#{anchor}"' in body
    assert "report-empty" not in body
    assert "5 conversations, 8 whole-conversation ratings" in body  # the population line names them


def test_the_conversations_page_computes_the_metrics_for_the_owner_only(study, client, researcher, other_researcher):
    ConversationMetricScore.objects.all().delete()
    url = reverse("scoring:conversation_metrics_compute", args=[study.pk])
    client.force_login(other_researcher)
    assert client.post(url).status_code == 404
    assert not ConversationMetricScore.objects.exists()
    client.force_login(researcher)
    page = client.get(reverse("annotation:conversation_list", args=[study.pk])).content.decode()
    assert f'action="{url}"' in page
    response = client.post(url, follow=True)
    assert "for 5 conversations" in response.content.decode()
    assert ConversationMetricScore.objects.filter(conversation__dataset=study).count() == 5 * 6


def test_the_pipeline_bar_and_metrics_index_count_a_conversation_datasets_metrics(study, client, researcher):
    # Before: a dataset of conversations only said "Metrics: not computed yet" after its conversation
    # metrics were computed, since the bar read the (response) metric runs, of which it has none.
    ConversationMetricScore.objects.all().delete()
    client.force_login(researcher)
    conversations_page = reverse("annotation:conversation_list", args=[study.pk])

    def metrics_step():
        page = client.get(reverse("annotation:dataset_detail", args=[study.pk])).content.decode()
        bar = re.search(r'<nav class="pipeline".*?</nav>', page, re.S).group(0)
        href, state = re.search(
            r'<a href="([^"]+)"[^>]*><span class="step-label">Metrics</span> <span class="step-state">([^<]+)', bar
        ).groups()
        return state, href

    assert metrics_step() == ("not computed yet", conversations_page)
    client.post(reverse("scoring:conversation_metrics_compute", args=[study.pk]))
    names = ConversationMetricScore.objects.filter(conversation__dataset=study).values("metric").distinct().count()
    assert names == 6
    assert metrics_step() == ("6 conversation metrics computed", conversations_page)
    index = client.get(reverse("scoring:metrics_index")).content.decode()
    assert "6 conversation metrics computed" in index and f'href="{conversations_page}"' in index
    assert "5 conversations" in index


def test_new_conversation_ratings_or_metric_scores_make_the_report_stale(study):
    before = report_fingerprint(dataset=study), report_change_marker(dataset=study)
    line = {"conversation_id": "a2", "worker": "w3", "aspect": "overall", "score": 1}
    conversation_ratings_import(file=jsonl([line]), dataset=study)
    after_rating = report_fingerprint(dataset=study), report_change_marker(dataset=study)
    assert after_rating[0] != before[0] and after_rating[1] != before[1]
    ConversationMetricScore.objects.filter(conversation__dataset=study, metric="system_turns").update(value=0)
    assert report_fingerprint(dataset=study) != after_rating[0]


def test_the_section_states_its_population_once_on_the_page_and_whole_in_each_table_read_alone(
    study, researcher_client, django_capture_on_commit_callbacks, settings, tmp_path
):
    # Before: all of the section's tables repeated the same long population sentence under them.
    settings.MEDIA_ROOT = tmp_path
    url = reverse("analysis:dataset_report", args=[study.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    notes = re.findall(r'<p class="table-note">([^<]*Population: [^<]*)</p>', body)
    assert len(notes) >= 3
    assert "Population: 5 conversations" in notes[0]
    assert all(note.endswith("Population: as above.") for note in notes[1:])
    data = report_build(dataset=study)
    alone = [builder(data) for builder in conversations_section.BUILDERS]
    assert all("Population: 5 conversations" in table.note for table in alone if table.rows)
