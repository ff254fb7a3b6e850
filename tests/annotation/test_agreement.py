"""Agreement statistics against hand-computed values and the libraries called directly."""

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from annotation.models import Survey
from annotation.quality import agreement
from annotation.quality.selectors import agreement_summary
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import grade, usr_personachat

SCALE = [1, 2, 3, 4, 5]


def _weighted_kappa_by_hand(a, b, scale, power):
    """Cohen's weighted kappa from its definition, weights |i - j|**power over the scale's positions."""
    index = {v: i for i, v in enumerate(scale)}
    k = len(scale)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :])
    weights = 1.0 - np.eye(k) if power == 0 else distance**power
    return 1 - (weights * observed).sum() / (weights * expected).sum()


def test_unweighted_kappa_matches_the_hand_computed_value():
    # p_o = 3/4; p_e = 2/4*2/4 + 1/4*2/4 = 3/8; kappa = (3/4 - 3/8) / (5/8) = 0.6
    kappa, _, _ = agreement.cohen_kappas([1, 2, 3, 1], [1, 2, 2, 1], scale=SCALE)
    assert kappa == pytest.approx(0.6)


def test_weighted_kappas_follow_the_whole_scale_even_for_unused_values():
    a, b = [1, 2, 5, 5, 2], [2, 1, 5, 1, 2]
    kappa, linear, quadratic = agreement.cohen_kappas(a, b, scale=SCALE)
    assert linear == pytest.approx(_weighted_kappa_by_hand(a, b, SCALE, 1))
    assert quadratic == pytest.approx(_weighted_kappa_by_hand(a, b, SCALE, 2))
    assert kappa == pytest.approx(_weighted_kappa_by_hand(a, b, SCALE, 0))
    # Letting the library infer labels from the pair (1, 2, 5) would put 2 and 5 next to each other.
    assert linear != pytest.approx(cohen_kappa_score(a, b, weights="linear"))


def test_kappa_is_none_when_both_annotators_gave_one_and_the_same_value():
    assert agreement.cohen_kappas([4, 4, 4], [4, 4, 4], scale=SCALE) == (None, None, None)


def test_kappa_is_zero_when_two_constant_annotators_disagree():
    assert agreement.cohen_kappas([3, 3], [4, 4], scale=SCALE) == (0.0, 0.0, 0.0)


def test_scores_off_the_scale_are_refused():
    with pytest.raises(ValueError, match="not on the scale"):
        agreement.pairwise_agreement([("a", 1, 7), ("b", 1, 3)], scale=SCALE)


def test_pairs_below_the_overlap_minimum_are_listed_but_not_used():
    ratings = [("a", i, 1 + i % 5) for i in range(6)]
    ratings += [("b", i, 1 + (i + i // 3) % 5) for i in range(6)]
    ratings += [("c", i, 1 + i % 5) for i in range(2)]
    pairs = {(p.a, p.b): p for p in agreement.pairwise_agreement(ratings, scale=SCALE, min_overlap=5)}
    assert pairs[("a", "b")].n == 6 and pairs[("a", "b")].used
    assert pairs[("a", "c")].n == 2 and not pairs[("a", "c")].used
    assert pairs[("a", "c")].kappa == pytest.approx(1.0)
    means = agreement.annotator_kappas(list(pairs.values()))
    assert means["c"] == (None, 0)
    assert means["a"] == (pytest.approx(pairs[("a", "b")].kappa), 1)


def test_the_vectorised_engine_equals_sklearn_pair_by_pair():
    rng = np.random.default_rng(11)
    ratings = [(f"w{w}", i, int(rng.integers(1, 6))) for w in range(8) for i in range(60) if rng.random() < 0.6]
    ratings += [("same1", i, 3) for i in range(5)] + [("same2", i, 3) for i in range(5)]
    by_sklearn = agreement.pairwise_agreement(ratings, scale=SCALE, min_overlap=5, engine="sklearn")
    by_numpy = agreement.pairwise_agreement(ratings, scale=SCALE, min_overlap=5, engine="numpy")
    assert [(p.a, p.b, p.n, p.used) for p in by_sklearn] == [(p.a, p.b, p.n, p.used) for p in by_numpy]
    assert len(by_sklearn) > 28
    for x, y in zip(by_sklearn, by_numpy, strict=True):
        for key in ("kappa", "kappa_linear", "kappa_quadratic"):
            if getattr(x, key) is None:
                assert getattr(y, key) is None
            else:
                assert getattr(y, key) == pytest.approx(getattr(x, key), abs=1e-12)
    assert next(p for p in by_numpy if (p.a, p.b) == ("same1", "same2")).kappa is None


def test_annotator_kappa_is_the_mean_of_used_pairs_in_the_chosen_weighting():
    pairs = [
        agreement.PairAgreement("a", "b", 10, 0.2, 0.4, 0.6, True),
        agreement.PairAgreement("a", "c", 10, 0.4, 0.5, 0.9, True),
        agreement.PairAgreement("b", "c", 2, 0.9, 0.9, 0.9, False),
    ]
    assert agreement.annotator_kappas(pairs)["a"] == (pytest.approx(0.3), 2)
    assert agreement.annotator_kappas(pairs, weighting="quadratic")["a"] == (pytest.approx(0.75), 2)
    assert agreement.annotator_kappas(pairs)["b"] == (pytest.approx(0.2), 1)
    assert agreement.median_kappa(pairs) == pytest.approx(0.3)
    assert agreement.median_kappa(pairs, annotators={"a", "b"}) == pytest.approx(0.2)


def _pairs_from(kappa_of, names):
    """Used pairs of every two `names`, each with kappa `kappa_of(a, b)` in all weightings."""
    return [
        agreement.PairAgreement(a, b, 20, kappa_of(a, b), kappa_of(a, b), kappa_of(a, b), True)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]


def test_consensus_kappas_keep_careless_partners_from_dragging_careful_annotators_under():
    careful = [f"careful{i}" for i in range(6)]
    careless = [f"careless{i}" for i in range(3)]
    pairs = _pairs_from(lambda a, b: 0.3 if a in careful and b in careful else 0.0, careful + careless)
    plain = agreement.annotator_kappas(pairs)
    judged = agreement.consensus_kappas(pairs, threshold=0.2)
    # The plain mean puts every careful annotator under 0.2: 5 partners at 0.3, 3 at 0.0.
    assert plain["careful0"] == (pytest.approx(0.1875), 8)
    # Judged over the consensus, the careful ones agree; the careless agree with nobody in it.
    assert all(judged[name] == (pytest.approx(0.3), 5) for name in careful)
    assert all(judged[name] == (pytest.approx(0.0), 6) for name in careless)


def test_consensus_kappas_leave_out_distrusted_partners_and_judge_them_too():
    names = ["a", "b", "c", "fast"]
    pairs = _pairs_from(lambda a, b: -0.2 if "fast" in (a, b) else 0.25, names)
    judged = agreement.consensus_kappas(pairs, threshold=0.2, distrusted={"fast"})
    assert judged["a"] == (pytest.approx(0.25), 2)
    assert judged["fast"] == (pytest.approx(-0.2), 3)  # still has a value to show, judged against a, b, c


def test_consensus_kappas_fall_back_to_the_plain_mean_without_a_consensus():
    pairs = [agreement.PairAgreement("a", "b", 10, 0.1, 0.1, 0.1, True)]
    assert agreement.consensus_kappas(pairs, threshold=0.2) == agreement.annotator_kappas(pairs)
    # Nobody agrees with anybody: everyone keeps the plain mean, so everyone stays under.
    noise = _pairs_from(lambda a, b: 0.05, ["a", "b", "c", "d"])
    assert agreement.consensus_kappas(noise, threshold=0.2) == agreement.annotator_kappas(noise)
    # The rule switched off: plain means; unused pairs count for nobody.
    unused = [*noise, agreement.PairAgreement("a", "e", 2, 0.9, 0.9, 0.9, False)]
    assert agreement.consensus_kappas(unused, threshold=None) == agreement.annotator_kappas(unused)
    assert agreement.consensus_kappas(unused, threshold=None)["e"] == (None, 0)


def test_alpha_matches_krippendorffs_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units.
    n = None
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    ratings = [(coder, unit, v) for coder, row in enumerate(data) for unit, v in enumerate(row) if v is not None]
    assert agreement.krippendorff_alpha(ratings, scale=SCALE) == pytest.approx(0.8154, abs=1e-4)


def test_alpha_of_packed_rows_equals_the_annotator_matrix():
    rng = np.random.default_rng(3)
    matrix = rng.integers(1, 6, size=(6, 40)).astype(float)
    matrix[rng.random(matrix.shape) < 0.4] = np.nan
    ratings = [(r, c, int(matrix[r, c])) for r in range(6) for c in range(40) if not np.isnan(matrix[r, c])]
    direct = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=SCALE)
    assert agreement.krippendorff_alpha(ratings, scale=SCALE) == pytest.approx(direct)


def test_alpha_is_none_without_variation():
    assert agreement.krippendorff_alpha([("a", 1, 3), ("b", 1, 3)], scale=SCALE) is None
    assert agreement.krippendorff_alpha([("a", 1, 3)], scale=SCALE) is None


def test_split_half_of_two_identical_annotators_is_perfect():
    ratings = [(w, i, 1 + (i * 7) % 5) for w in ("a", "b") for i in range(20)]
    result = agreement.split_half_agreement(ratings, n_splits=5)
    assert result["mode"] == "annotators"
    assert result["n_splits"] == 5 and result["n_responses"] == 20
    assert result["pearson"] == {"mean": pytest.approx(1.0), "std": pytest.approx(0.0)}
    assert result["spearman"]["mean"] == pytest.approx(1.0)


def test_split_half_correlates_the_halves_means():
    ratings = [("a", 0, 1), ("b", 0, 2), ("a", 1, 3), ("b", 1, 3), ("a", 2, 5), ("b", 2, 4), ("a", 3, 2), ("b", 3, 4)]
    result = agreement.split_half_agreement(ratings, n_splits=3, mode="annotators")
    expected = stats.pearsonr([1, 3, 5, 2], [2, 3, 4, 4])[0]
    assert result["pearson"]["mean"] == pytest.approx(expected)
    assert result["spearman"]["mean"] == pytest.approx(stats.spearmanr([1, 3, 5, 2], [2, 3, 4, 4])[0])


def test_split_half_splits_each_items_ratings_when_raters_are_anonymous():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=30)
    ratings = [(f"r{i}-{k}", i, int(truth[i])) for i in range(30) for k in range(4)]
    assert agreement.split_half_mode(ratings) == "items"
    result = agreement.split_half_agreement(ratings, n_splits=10, seed=1)
    assert result["mode"] == "items" and result["n_responses"] == 30
    assert result["pearson"]["mean"] == pytest.approx(1.0)


def test_split_half_is_reproducible_with_a_seed():
    rng = np.random.default_rng(5)
    ratings = [(f"w{w}", i, int(rng.integers(1, 6))) for w in range(6) for i in range(30)]
    first = agreement.split_half_agreement(ratings, n_splits=20, seed=7)
    assert first == agreement.split_half_agreement(ratings, n_splits=20, seed=7)
    assert first["n_splits"] == 20


def test_kappa_histogram_counts_each_band():
    bins = agreement.kappa_histogram([-0.1, 0.1, 0.25, 0.5, 1.0, None])
    assert [b["count"] for b in bins] == [1, 1, 1, 1, 0, 1]


@pytest.mark.shared_data
@pytest.mark.django_db
def test_usr_pairwise_kappas_and_alpha_equal_the_libraries(shared_data):
    dataset_records, rating_records = usr_personachat(shared_data)
    dataset = load_dataset_records(records=dataset_records, name="usr")
    survey = load_rating_records(records=rating_records, dataset=dataset, survey_name="usr-overall")

    summary = agreement_summary(survey=survey)

    table = {}
    for record in rating_records:
        table.setdefault(record["worker"], {})[(record["context_id"], record["system"])] = record["score"]
    workers = sorted(table)
    assert workers == ["maxine", "mckenna", "shikib", "yulan"]
    expected_pairs = {}
    for i, a in enumerate(workers):
        for b in workers[i + 1 :]:
            shared = sorted(table[a].keys() & table[b].keys())
            x = [table[a][k] for k in shared]
            y = [table[b][k] for k in shared]
            expected_pairs[(a, b)] = (
                len(shared),
                cohen_kappa_score(x, y, labels=SCALE),
                cohen_kappa_score(x, y, labels=SCALE, weights="linear"),
                cohen_kappa_score(x, y, labels=SCALE, weights="quadratic"),
            )
    got = {(p["a"], p["b"]): p for p in summary["pairs"]}
    assert set(got) == set(expected_pairs)
    for key, (n, kappa, linear, quadratic) in expected_pairs.items():
        assert got[key]["n"] == n
        assert got[key]["kappa"] == pytest.approx(kappa)
        assert got[key]["kappa_linear"] == pytest.approx(linear)
        assert got[key]["kappa_quadratic"] == pytest.approx(quadratic)
        assert got[key]["used"]
    assert sorted(n for n, *_ in expected_pairs.values()) == [100, 100, 100, 200, 200, 200]
    assert summary["median_kappa"] == pytest.approx(float(np.median([v[1] for v in expected_pairs.values()])))

    # Nobody falls below 0.2 on USR-PersonaChat, so alpha is over every rating.
    assert not any(a["excluded"] for a in summary["annotators"])
    items = sorted({k for scores in table.values() for k in scores})
    matrix = np.array([[table[w].get(k, np.nan) for k in items] for w in workers], dtype=float)
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=SCALE)
    assert summary["alpha"] == pytest.approx(alpha)
    assert summary["alpha"] == pytest.approx(summary["alpha_all"])

    split = summary["split_half"]
    assert split["mode"] == "annotators" and split["n_splits"] == 100
    assert 0.5 < split["pearson"]["mean"] < 0.9 and split["pearson"]["std"] > 0
    assert not math.isnan(split["spearman"]["mean"])
    assert Survey.objects.get(pk=survey.pk).quality_report.fingerprint


@pytest.mark.shared_data
@pytest.mark.django_db
def test_grade_split_half_splits_each_items_ratings(shared_data):
    dataset_records, rating_records = grade(shared_data, "dailydialog")
    dataset = load_dataset_records(records=dataset_records, name="grade-dd")
    load_rating_records(records=rating_records, dataset=dataset, survey_name="grade-dd")

    summary = agreement_summary(dataset=dataset)

    assert summary["pairs"] == []  # every rater id rates one item: no pair means anything
    assert summary["split_half"]["mode"] == "items"
    assert summary["split_half"]["n_splits"] == 100 and summary["split_half"]["n_responses"] == 300
    per_item = {}
    for record in rating_records:
        per_item.setdefault((record["context_id"], record["system"]), []).append(record["score"])
    depth = max(len(v) for v in per_item.values())
    matrix = np.full((depth, len(per_item)), np.nan)
    for column, scores in enumerate(per_item.values()):
        matrix[: len(scores), column] = scores
    direct = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=SCALE)
    assert summary["alpha"] == pytest.approx(direct)


def test_split_half_correlations_equal_scipys_on_every_split():
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, size=80)
    ratings = [(f"w{w}", i, int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))) for w in range(6) for i in range(80)]
    halves = list(agreement.split_halves(ratings, n_splits=5, seed=4, mode="annotators"))
    result = agreement.split_half_agreement(ratings, n_splits=5, seed=4, mode="annotators")
    pearsons = [stats.pearsonr(a, b)[0] for a, b in halves]
    spearmans = [stats.spearmanr(a, b)[0] for a, b in halves]
    assert result["pearson"]["mean"] == pytest.approx(np.mean(pearsons))
    assert result["pearson"]["std"] == pytest.approx(np.std(pearsons))
    assert result["spearman"]["mean"] == pytest.approx(np.mean(spearmans))
    a, b = halves[0]
    per_item = {}
    for _worker, item, score in ratings:
        per_item.setdefault(item, []).append(score)
    assert len(a) == 80 and np.all((a >= 1) & (a <= 5)) and np.all((b >= 1) & (b <= 5))
    overall = np.array([np.mean(per_item[i]) for i in range(80)])
    assert np.allclose((a + b) / 2, overall)  # two halves of three annotators each
