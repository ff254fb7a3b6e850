"""Issue 39 in the report: can a judge replace the crowd (alt-test), the judges' calibration and
cost, WMT's SPA / PDP ranking, and the arena ranking with length and style control. Each figure is
checked against a direct call of its pure function on data gathered here from the models (not
through the report's own selectors), and each moves with the report's filters."""

import io
import json
from itertools import combinations

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.sections.wmt import ranking_permutations
from analysis.services.build import report_build
from analysis.stats import alttest, arena, calibration, spa, style_control
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.models import HIT, Assignment, PairwiseJudgement, Rating, Response, Survey
from scoring.judges import pairwise, prompts
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage, MetricRun, MetricScore
from scoring.services.judges.pairwise import dataset_pair_items
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db

WORKERS = ("w1", "w2", "w3", "w4")
N_CONTEXTS = 40
SYSTEMS = ("short", "long")


def true_score(i, s):
    return 1 + (3 * i + 2 * s) % 5


def human_score(i, s, k):
    """Annotators who agree up to a point now and then (each on different items)."""
    nudge = 1 if (i + 3 * k) % 7 == 0 else 0
    return min(5, true_score(i, s) + nudge)


@pytest.fixture
def rated(researcher):
    """40 contexts x 2 systems rated by four annotators; judge:mean gives the rounded human mean,
    judge:dice a score unrelated to the humans; judge `mean` is a Judge row with prices and usage."""
    records = [
        {
            "context_id": f"k{i}",
            "context": ["hi", f"question {i}?"],
            "references": ["an answer"],
            "responses": [
                {"system": "short", "text": "ok"},
                {"system": "long", "text": " ".join(["word"] * (3 + i % 9))},
            ],
        }
        for i in range(N_CONTEXTS)
    ]
    dataset = load_dataset_records(records=records, name="crowdjudge", owner=researcher)
    ratings = [
        {"context_id": f"k{i}", "system": system, "worker": worker, "score": human_score(i, s, k)}
        for i in range(N_CONTEXTS)
        for s, system in enumerate(SYSTEMS)
        for k, worker in enumerate(WORKERS)
    ]
    load_rating_records(records=ratings, dataset=dataset, survey_name="crowdjudge-ratings", owner=researcher)
    Rating.objects.filter(survey__dataset=dataset).update(seconds=12.0)
    rng = np.random.default_rng(3)
    scores = []
    for response in Response.objects.filter(context__dataset=dataset).select_related("context", "system"):
        i, s = int(response.context.external_id[1:]), SYSTEMS.index(response.system.name)
        mean = np.mean([human_score(i, s, k) for k in range(len(WORKERS))])
        scores += [
            MetricScore(response=response, metric="judge:mean", version="t", value=float(np.floor(mean + 0.5))),
            MetricScore(response=response, metric="judge:dice", version="t", value=float(rng.integers(1, 6))),
            MetricScore(response=response, metric="overlap", version="t", value=mean / 5 + rng.normal(0, 0.2)),
        ]
    MetricScore.objects.bulk_create(scores)
    judge = Judge.objects.create(
        owner=researcher,
        name="mean",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        price_per_million_prompt_tokens=1,
        price_per_million_completion_tokens=2,
    )
    run = MetricRun.objects.create(dataset=dataset, metrics=["judge:mean"], status=MetricRun.Status.DONE)
    JudgeUsage.objects.create(
        judge=judge, run=run, prompts=100, cached=20, requests=80, prompt_tokens=80 * 500, completion_tokens=80 * 5
    )
    return dataset


def direct_humans(dataset, systems=None):
    """`{worker: {response id: score}}` read straight from the ratings (every one is accepted here)."""
    rows = Rating.objects.filter(survey__dataset=dataset)
    if systems:
        rows = rows.filter(response__system__name__in=systems)
    humans = {}
    for worker, response, score in rows.values_list("annotator__worker_id", "response_id", "score"):
        humans.setdefault(worker, {})[response] = float(score)
    return humans


def direct_scores(dataset, metric, systems=None):
    rows = MetricScore.objects.filter(response__context__dataset=dataset, metric=metric)
    if systems:
        rows = rows.filter(response__system__name__in=systems)
    return dict(rows.values_list("response_id", "value"))


def test_the_alt_test_of_each_judge_equals_a_direct_call_and_the_good_judge_replaces_the_crowd(rated):
    data = report_build(dataset=rated, n_boot=0)
    rows = {row["metric"]: row for row in data["alt_test"]}
    assert set(rows) == {"judge:mean", "judge:dice"}  # metrics are off by default
    humans = direct_humans(rated)
    for name, row in rows.items():
        expected = alttest.alt_test(humans, direct_scores(rated, name), scoring="neg_rmse", epsilon=0.1)
        for key in ("omega", "rho", "epsilon", "scoring", "n_annotators", "n_items", "passes"):
            assert row[key] == pytest.approx(expected[key]), (name, key)
        assert sorted(a["p_value"] for a in row["annotators"]) == pytest.approx(
            sorted(a["p_value"] for a in expected["annotators"])
        )
    assert rows["judge:mean"]["passes"] and not rows["judge:dice"]["passes"]
    assert rows["judge:mean"]["n_annotators"] == 4 and rows["judge:mean"]["n_items"] == 2 * N_CONTEXTS
    assert data["alt_test_warnings"] == []  # 4 annotators, 80 items each


def test_epsilon_and_metrics_are_report_options(rated):
    data = report_build(dataset=rated, n_boot=0, options={"epsilon": "experts", "alt_test_metrics": True})
    rows = {row["metric"]: row for row in data["alt_test"]}
    assert "overlap" in rows and rows["overlap"]["mapped_to_scale"]
    assert {row["epsilon"] for row in rows.values()} == {0.2}
    expected = alttest.alt_test(
        direct_humans(rated), direct_scores(rated, "judge:dice"), scoring="neg_rmse", epsilon=0.2
    )
    assert rows["judge:dice"]["omega"] == pytest.approx(expected["omega"])


def test_the_alt_tests_rating_scoring_is_a_report_option(rated):
    data = report_build(dataset=rated, n_boot=0, options={"alt_scoring": "neg_mae"})
    rows = {row["metric"]: row for row in data["alt_test"]}
    expected = alttest.alt_test(
        direct_humans(rated), direct_scores(rated, "judge:dice"), scoring="neg_mae", epsilon=0.1
    )
    assert rows["judge:dice"]["scoring"] == "neg_mae"
    assert rows["judge:dice"]["omega"] == pytest.approx(expected["omega"])
    assert rows["judge:dice"]["rho"] == pytest.approx(expected["rho"])
    out = io.StringIO()
    call_command("report", dataset=rated.name, format="json", bootstrap=0, alt_scoring="neg_mae", stdout=out)
    assert {row["scoring"] for row in json.loads(out.getvalue())["alt_test"]} == {"neg_mae"}


def test_the_systems_filter_changes_the_alt_tests_n_and_warns_below_30_items(rated):
    data = report_build(dataset=rated, n_boot=0, systems=["long"])
    row = next(row for row in data["alt_test"] if row["metric"] == "judge:mean")
    assert row["n_items"] == N_CONTEXTS
    expected = alttest.alt_test(
        direct_humans(rated, ["long"]), direct_scores(rated, "judge:mean", ["long"]), scoring="neg_rmse"
    )
    assert row["omega"] == pytest.approx(expected["omega"]) and row["rho"] == pytest.approx(expected["rho"])
    Rating.objects.filter(survey__dataset=rated, annotator__worker_id__in=["w3", "w4"]).delete()
    data = report_build(dataset=rated, n_boot=0, systems=["long"])
    assert any("at least 3" in warning for warning in data["alt_test_warnings"])
    assert all(row["n_annotators"] == 2 for row in data["alt_test"])


def test_calibration_equals_a_direct_call_on_the_same_ratings(rated):
    data = report_build(dataset=rated, n_boot=0)
    row = next(row for row in data["judge_calibration"]["ratings"] if row["judge"] == "judge:mean")
    ids = sorted(direct_scores(rated, "judge:mean"))
    humans = direct_humans(rated)
    per_item = [[labels[i] for labels in humans.values() if i in labels] for i in ids]
    judge = direct_scores(rated, "judge:mean")
    systems = dict(Response.objects.filter(pk__in=ids).values_list("pk", "system__name"))
    expected = calibration.calibration(
        [judge[i] for i in ids],
        per_item,
        scale=[1, 2, 3, 4, 5],
        systems=[systems[i] for i in ids],
        reference="majority",
    )
    assert row["majority"]["confusion"] == expected["confusion"]
    assert row["majority"]["kappa_quadratic"] == pytest.approx(expected["kappa_quadratic"])
    assert row["mean"]["mean_offset"] == pytest.approx(expected["mean_offset"])
    assert [s["system"] for s in row["mean"]["systems"]] == [s["system"] for s in expected["systems"]]


def test_the_cost_panel_prices_the_judge_from_its_usage_and_the_crowd_from_its_time(rated):
    data = report_build(dataset=rated, n_boot=0)
    judges = {row["judge"]: row for row in data["judge_cost"]["judges"]}
    # 80 prompts asked: 500 prompt and 5 completion tokens each, at 1 and 2 per million tokens.
    assert judges["judge:mean"]["cost_per_1000"] == pytest.approx((500 * 1 + 5 * 2) / 1e6 * 1000)
    assert judges["judge:dice"]["cost_per_1000"] is None  # imported scores: no judge row
    crowd = data["judge_cost"]["crowd"][0]
    assert crowd["median_seconds"] == 12.0 and crowd["n_answers"] == len(WORKERS) * 2 * N_CONTEXTS
    assert crowd["cost_per_1000"] is None  # imported ratings belong to no paid task
    assert 0 < judges["judge:mean"]["precision"] <= 1


def test_the_judges_cost_counts_only_its_usage_on_this_dataset(rated, researcher):
    """The same judge's far costlier prompts on another dataset are not this report's population."""
    other = load_dataset_records(
        records=[{"context_id": "x", "context": ["hi"], "responses": [{"system": "s", "text": "t"}]}],
        name="elsewhere",
        owner=researcher,
    )
    run = MetricRun.objects.create(dataset=other, metrics=["judge:mean"], status=MetricRun.Status.DONE)
    JudgeUsage.objects.create(
        judge=Judge.objects.get(name="mean"), run=run, prompts=10, requests=10, prompt_tokens=10 * 9000
    )
    judges = {row["judge"]: row for row in report_build(dataset=rated, n_boot=0)["judge_cost"]["judges"]}
    assert judges["judge:mean"]["prompts_asked"] == 80
    assert judges["judge:mean"]["cost_per_1000"] == pytest.approx((500 * 1 + 5 * 2) / 1e6 * 1000)
    JudgeUsage.objects.filter(run__dataset=rated).delete()
    judges = {row["judge"]: row for row in report_build(dataset=rated, n_boot=0)["judge_cost"]["judges"]}
    assert judges["judge:mean"]["cost_per_1000"] is None
    assert "no recorded usage on this dataset" in judges["judge:mean"]["why_no_cost"]


def test_spa_and_pdp_equal_direct_calls_and_the_wmt_ranking_sits_beside_pearsons(rated, settings):
    settings.ANALYSIS_PERMUTATIONS = 20
    data = report_build(dataset=rated, n_boot=10)
    ids = sorted(direct_scores(rated, "judge:mean"))
    humans = direct_humans(rated)
    human = np.array([np.mean([labels[i] for labels in humans.values() if i in labels]) for i in ids])
    info = {
        pk: (system, context)
        for pk, system, context in Response.objects.filter(pk__in=ids).values_list("pk", "system__name", "context_id")
    }
    systems = [info[i][0] for i in ids]
    items = [info[i][1] for i in ids]
    metric = np.array([direct_scores(rated, "overlap")[i] for i in ids])
    expected_spa = spa.soft_pairwise_accuracy(
        spa.score_matrix(human, systems, items)[0], spa.score_matrix(metric, systems, items)[0]
    )["spa"]
    assert {row["metric"]: row["spa"] for row in data["spa"]}["overlap"] == pytest.approx(expected_spa)
    expected_pdp = spa.pairwise_difference_pearson(human, metric, items)["pdp"]
    assert {row["metric"]: row["pdp"] for row in data["pdp"]}["overlap"] == pytest.approx(expected_pdp)
    ranking = data["wmt_ranking"]["rows"]
    assert {row["metric"] for row in ranking} == set(data["metrics"])
    assert all(row["pearson_cluster"] == data["clusters"][row["metric"]] for row in ranking)


def test_the_page_shows_the_verdict_with_its_reasoning_and_the_new_panels(
    rated, researcher_client, settings, django_capture_on_commit_callbacks
):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    settings.ANALYSIS_PERMUTATIONS = 10
    url = reverse("analysis:dataset_report", args=[rated.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert 'can replace a crowd annotator on this study: <strong class="verdict-yes">yes</strong>' in body
    assert "verdict-no" in body and "Why: per annotator" in body
    assert 'id="t-judge-calibration"' in body and 'id="t-judge_cost"' in body and 'id="t-wmt_ranking"' in body
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url + "?epsilon=experts")
    body = researcher_client.get(url + "?epsilon=experts").content.decode()
    assert "ε 0.2," in body and 'value="experts" selected' in body
    csv = researcher_client.get(reverse("analysis:report_export", args=[_report_pk(rated), "csv"]) + "?table=alt_test")
    assert csv.content.decode().splitlines()[0] == "metric,kind,omega,rho,epsilon,scoring,n_annotators,n_items,passes"


def _report_pk(dataset):
    """The report without options (the page's default)."""
    return next(report.pk for report in dataset.reports.all() if "options" not in report.params)


# --- pairwise ------------------------------------------------------------------------------------

PAIR_SYSTEMS = ("alpha", "beta", "gamma")
PAIR_WORKERS = ("p1", "p2", "p3")
N_PAIR_CONTEXTS = 12


def pair_winner(i, a, b, k):
    """The stronger system (alpha > beta > gamma) wins, but one worker in turn disagrees now and then."""
    better = "a" if PAIR_SYSTEMS.index(a) < PAIR_SYSTEMS.index(b) else "b"
    if (i + k) % 5 == 0:
        return "tie"
    return better


@pytest.fixture
def judged_pairs_study(researcher):
    records = [
        {
            "context_id": f"c{i}",
            "context": ["hello", f"what {i}?"],
            "references": ["ref"],
            "responses": [
                {"system": name, "text": " ".join(["w"] * (2 + 3 * j + i % 3)) + ("\n- item" * j)}
                for j, name in enumerate(PAIR_SYSTEMS)
            ],
        }
        for i in range(N_PAIR_CONTEXTS)
    ]
    dataset = load_dataset_records(records=records, name="arena", owner=researcher)
    lines = [
        {"context_id": f"c{i}", "system_a": a, "system_b": b, "worker": worker, "winner": pair_winner(i, a, b, k)}
        for i in range(N_PAIR_CONTEXTS)
        for a, b in (("alpha", "beta"), ("gamma", "alpha"), ("beta", "gamma"))
        for k, worker in enumerate(PAIR_WORKERS)
    ]
    survey = pairwise_import(
        file="".join(json.dumps(x) + "\n" for x in lines).encode(), dataset=dataset, fmt="jsonl", survey_name="arena-ab"
    )
    Survey.objects.filter(pk=survey.pk).update(kappa_threshold=-1.0)
    # A pairwise judge that always picks the stronger system, in both orders: its answers in its cache.
    judge = Judge.objects.create(
        owner=researcher, name="oracle", base_url="http://127.0.0.1:9/v1", model="m", template=prompts.PAIRWISE
    )
    template = prompts.get_template(prompts.PAIRWISE)
    strength = {
        text: PAIR_SYSTEMS.index(system)
        for text, system in Response.objects.filter(context__dataset=dataset).values_list("text", "system__name")
    }
    entries = {}
    for item in dataset_pair_items(dataset):
        for messages, (first, second) in zip(
            pairwise.both_orders_messages(template, item),
            ((item.reply_a, item.reply_b), (item.reply_b, item.reply_a)),
            strict=True,
        ):
            pick = "A" if strength[first] < strength[second] else "B"
            entries[prompts.prompt_hash(messages)] = pick
    JudgeCacheEntry.objects.bulk_create(
        JudgeCacheEntry(judge=judge, template_version=template.key, prompt_hash=h, values=[pick])
        for h, pick in entries.items()
    )
    return dataset


def direct_pair_humans(dataset, systems=None):
    humans = {}
    rows = PairwiseJudgement.objects.filter(survey__dataset=dataset)
    if systems:
        rows = rows.filter(response_a__system__name__in=systems, response_b__system__name__in=systems)
    for worker, a, b, winner in rows.values_list("annotator__worker_id", "response_a_id", "response_b_id", "winner"):
        won = {"a": a, "b": b}.get(winner)
        humans.setdefault(worker, {})[(min(a, b), max(a, b))] = (
            "tie" if won is None else ("first" if won == min(a, b) else "second")
        )
    return humans


def test_the_pairwise_judges_alt_test_equals_a_direct_call(judged_pairs_study):
    data = report_build(dataset=judged_pairs_study, n_boot=0)
    row = next(row for row in data["alt_test"] if row["kind"] == "pairwise")
    assert row["metric"] == "judge:oracle" and row["scoring"] == "accuracy"
    humans = direct_pair_humans(judged_pairs_study)
    texts = dict(Response.objects.filter(context__dataset=judged_pairs_study).values_list("pk", "system__name"))
    judge = {
        key: "first" if PAIR_SYSTEMS.index(texts[key[0]]) < PAIR_SYSTEMS.index(texts[key[1]]) else "second"
        for labels in humans.values()
        for key in labels
    }
    expected = alttest.alt_test(humans, judge, scoring="accuracy", epsilon=0.1)
    for key in ("omega", "rho", "n_annotators", "n_items"):
        assert row[key] == pytest.approx(expected[key]), key
    assert row["n_items"] == 3 * N_PAIR_CONTEXTS
    assert data["alt_test_warnings"] == []  # 3 annotators, 36 shared items each
    position = data["judge_calibration"]["pairwise"][0]
    assert position["consistent"] == 1.0 and position["n"] == 3 * N_PAIR_CONTEXTS


def test_the_arena_ranking_equals_a_direct_call_and_the_filter_changes_it(judged_pairs_study):
    data = report_build(dataset=judged_pairs_study, n_boot=20, options={"scale": "elo", "baseline": "gamma"})
    section = data["arena"]
    rows = PairwiseJudgement.objects.filter(survey__dataset=judged_pairs_study).order_by("pk")
    sides = list(rows.values_list("response_a__system__name", "response_b__system__name", "winner"))
    names = sorted(PAIR_SYSTEMS)
    a = np.array([names.index(x) for x, _, _ in sides])
    b = np.array([names.index(y) for _, y, _ in sides])
    outcome = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[w] for *_, w in sides])
    expected = arena.arena_ranking(names, a, b, outcome, n_boot=20, seed=0, scale="elo")
    assert [row["system"] for row in section["systems"]] == [row["system"] for row in expected] == list(PAIR_SYSTEMS)
    assert [row["rank_ub"] for row in section["systems"]] == [row["rank_ub"] for row in expected]
    assert [row["elo"] for row in section["systems"]] == pytest.approx([row["strength"] for row in expected])
    assert section["scale"] == "elo" and section["baseline"] == "gamma"
    lc = {row["system"]: row for row in section["length_controlled"]}
    assert set(lc) == {"alpha", "beta"}
    against = [(x, y, w) for x, y, w in sides if "gamma" in (x, y) and "alpha" in (x, y)]
    preference = [
        {"a": 1.0, "b": 0.0, "tie": 0.5}[w] if x == "alpha" else {"a": 0.0, "b": 1.0, "tie": 0.5}[w]
        for x, y, w in against
    ]
    assert lc["alpha"]["win_rate"] == pytest.approx(np.mean(preference))
    texts = list(rows.values_list("response_a__text", "response_b__text"))
    features = [(style_control.style_features(x), style_control.style_features(y)) for x, y in texts]
    names_of = list(features[0][0])
    styled = style_control.style_controlled_strengths(
        (a, b, outcome),
        len(names),
        {n: np.array([f[0][n] for f in features], dtype=float) for n in names_of},
        {n: np.array([f[1][n] for f in features], dtype=float) for n in names_of},
        n_boot=0,
    )
    by_system = {row["system"]: row["strength"] for row in section["style_controlled"]["systems"]}
    assert [by_system[n] for n in names] == pytest.approx(styled["strengths"].tolist(), abs=1e-6)
    filtered = report_build(dataset=judged_pairs_study, n_boot=0, systems=["alpha", "beta"])["arena"]
    assert filtered["n_judgements"] == len(PAIR_WORKERS) * N_PAIR_CONTEXTS < section["n_judgements"]


def test_the_report_command_takes_the_options(rated):
    out = io.StringIO()
    call_command("report", dataset=rated.name, format="json", bootstrap=0, epsilon="skilled", stdout=out)
    data = json.loads(out.getvalue())
    assert {row["epsilon"] for row in data["alt_test"]} == {0.15} and data["options"]["epsilon"] == "skilled"


def test_the_wmt_ranking_ranks_every_metric_with_up_to_a_thousand_permutations_a_test(rated, settings):
    assert ranking_permutations(10) == 10 and ranking_permutations(5000) == 1000
    settings.ANALYSIS_PERMUTATIONS = 300
    ranking = report_build(dataset=rated, n_boot=10)["wmt_ranking"]
    names = {"judge:mean", "judge:dice", "overlap"}
    assert {row["metric"] for row in ranking["rows"]} == names
    assert ranking["permutations"] == 300
    # Every two metrics tested once under each statistic, each test stopped at a block's end or at k.
    for statistic in ("spa", "acc_eq"):
        pairs = [frozenset((t["a"], t["b"])) for t in ranking["tests"] if t["statistic"] == statistic]
        assert sorted(map(sorted, pairs)) == sorted(map(sorted, combinations(sorted(names), 2)))
    assert all(t["permutations"] in (100, 200, 300) for t in ranking["tests"])


def test_the_crowd_cost_is_the_reward_over_the_answers_a_paid_task_held(rated):
    """Ratings handed in through tasks of ten answers each, at the survey's 50-cent reward, 12 s an answer."""
    survey = Survey.objects.get(dataset=rated)
    ratings = list(Rating.objects.filter(survey=survey).order_by("annotator_id", "pk"))
    for start in range(0, len(ratings), 10):
        chunk = ratings[start : start + 10]
        hit = HIT.objects.create(survey=survey, position=start // 10)
        task = Assignment.objects.create(
            hit=hit, slot=0, annotator=chunk[0].annotator, status=Assignment.Status.APPROVED
        )
        Rating.objects.filter(pk__in=[r.pk for r in chunk]).update(assignment=task)
    crowd = report_build(dataset=rated, n_boot=0)["judge_cost"]["crowd"][0]
    assert crowd["answers_per_task"] == 10 and crowd["reward_cents"] == 50
    assert crowd["cost_per_1000"] == pytest.approx(0.50 / 10 * 1000)
    assert crowd["hourly"] == pytest.approx(0.05 / 12 * 3600)
