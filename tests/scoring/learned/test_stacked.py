"""The stacked evaluator: a ridge over existing scores, fitted on the training folds only."""

from dataclasses import replace

import numpy as np
import pytest

from scoring.adem.checkpoint import CheckpointError
from scoring.adem.splits import folds_by_context
from scoring.learned import crossfit, kinds, stacked
from scoring.learned.data import Response
from tests.scoring.learned.generated import rated_set

STORED_ONLY = {"reference_free": False}


def test_stacked_learns_the_feature_that_carries_the_score():
    rated = rated_set(contexts=30, per_context=3, seed=1)
    # The generated texts mean nothing: the stored features alone are what this test is about
    # (the reference-free ones have their own tests, on texts that carry the score).
    final, results = crossfit.cross_validate("stacked", rated, folds=5, seed=0, config=STORED_ONLY)
    assert results["test"]["spearman"] > 0.8
    weights = final.weights()
    assert abs(weights["quality"]) > 5 * abs(weights["noise"])
    assert "flaky missing" in weights  # a metric that could not score every response gets its flag


def test_every_estimate_comes_from_the_training_rows_it_was_handed(monkeypatch):
    rated = rated_set(contexts=20, per_context=3, seed=2)
    handed = []
    original_fit = stacked.Stacked.fit

    def recording_fit(self, train, val, *, seed, progress=None):
        report = original_fit(self, train, val, seed=seed, progress=progress)
        handed.append((self, train, val))
        return report

    monkeypatch.setattr(stacked.Stacked, "fit", recording_fit)
    crossfit.cross_validate("stacked", rated, folds=4, seed=5, refit=False)
    folds = crossfit.kfold_by_context([r.context_id for r in rated], k=4, seed=5)
    assert len(handed) == 4
    for (model, train, val), (train_idx, _val_idx, test_idx) in zip(handed, folds, strict=True):
        assert [r.response_id for r in train] == [rated[i].response_id for i in train_idx]
        assert not {r.response_id for r in train + val} & {rated[i].response_id for i in test_idx}
        # Medians, centres and spreads are those of the rows handed (training and validation:
        # the default inner-cv rule fits on both and picks the penalty inside them).
        names = model.state["names"]
        features = stacked.feature_dicts(train + val, with_reference_free=True)  # stored scores and rf: ones
        matrix = np.array([[np.nan if f[n] is None else f[n] for n in names] for f in features])
        np.testing.assert_allclose(model.state["medians"], np.nanmedian(matrix, axis=0))
        filled = np.where(np.isnan(matrix), model.state["medians"], matrix)
        np.testing.assert_allclose(model.state["centre"][: len(names)], filled.mean(axis=0))
        assert model.state["intercept"] == pytest.approx(np.mean([r.score for r in train + val]))


def test_the_validation_rule_estimates_from_the_training_rows_alone():
    rated = rated_set(contexts=20, per_context=3, seed=2)
    train, val = rated[:45], rated[45:]
    model = kinds.get("stacked").new({**STORED_ONLY, "selection": "validation"})
    report = model.fit(train, val, seed=0)
    assert report.details["selection"] == "validation"
    assert model.state["intercept"] == pytest.approx(np.mean([r.score for r in train]))
    val_scores = [r.score for r in val]
    chosen = report.curve[report.best_epoch - 1]
    assert chosen["val_pearson"] == pytest.approx(stacked.pearson(model.predict(val), val_scores))


def test_the_inner_folds_choose_the_penalty_by_the_pooled_correlation_of_fits_that_never_saw_their_rows():
    """Recompute the inner cross-validation by hand: a ridge per inner fold (numpy's least squares
    on the augmented system, not the kind's normal equations), each scoring its held-out contexts."""
    rated = rated_set(contexts=16, per_context=3, seed=11)
    train, val = rated[:39], rated[39:]
    config = {**STORED_ONLY, "penalties": [100.0, 10.0, 1.0, 0.1], "patience": 9, "inner_folds": 4}
    report = kinds.get("stacked").new(config).fit(train, val, seed=3)
    rows = train + val
    y = np.array([r.score for r in rows])
    folds = folds_by_context([r.context_id for r in rows], k=4, seed=3)
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(len(rows)))
    for point in report.curve:
        pooled = np.empty(len(rows))
        for train_idx, test_idx in folds:
            x_train, x_test = _by_hand_design([rows[i] for i in train_idx], [rows[i] for i in test_idx])
            target = y[train_idx] - y[train_idx].mean()
            augmented = np.vstack([x_train, np.sqrt(point["penalty"]) * np.eye(x_train.shape[1])])
            beta = np.linalg.lstsq(augmented, np.concatenate([target, np.zeros(x_train.shape[1])]), rcond=None)[0]
            pooled[test_idx] = x_test @ beta + y[train_idx].mean()
        assert point["val_pearson"] == pytest.approx(np.corrcoef(pooled, y)[0, 1], abs=1e-9)
    assert report.best_epoch == 1 + int(np.argmax([p["val_pearson"] for p in report.curve]))
    assert report.details == {
        "penalty": report.curve[report.best_epoch - 1]["penalty"],
        "selection": "inner-cv",
        "inner_folds": 4,
        "fitted_on_validation": True,
    }


def _by_hand_design(train, test):
    """The generated set's features (quality, noise; flaky sometimes missing) as the kind reads
    them: median-filled, clipped to the training range, a missing flag, standardised on train."""

    def raw(rows):
        return np.array(
            [[np.nan if r.features[n] is None else r.features[n] for n in ("flaky", "noise", "quality")] for r in rows]
        )

    a, b = raw(train), raw(test)
    median, low, high = np.nanmedian(a, 0), np.nanmin(a, 0), np.nanmax(a, 0)

    def design(m):
        filled = np.clip(np.where(np.isnan(m), median, m), low, high)
        return np.hstack([filled, np.isnan(m[:, :1]).astype(float)])

    da, db = design(a), design(b)
    centre, spread = da.mean(0), da.std(0)
    return (da - centre) / spread, (db - centre) / spread


def test_a_fit_handed_a_single_context_falls_back_to_the_validation_rows():
    rated = rated_set(contexts=2, per_context=4, seed=1)
    report = kinds.get("stacked").new(STORED_ONLY).fit(rated[:4], rated[4:], seed=0)
    # Two contexts in all: inner-cv folds them (2 inner folds) instead of refusing.
    assert report.details["inner_folds"] == 2
    one_context = [r for r in rated if r.context_id == rated[0].context_id]
    report = kinds.get("stacked").new(STORED_ONLY).fit(one_context[:3], one_context[3:], seed=0)
    assert report.details["selection"] == "validation"


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"selection": "best"}, "selection must be one of inner-cv, validation"),
        ({"inner_folds": 1}, "inner_folds must be"),
    ],
)
def test_a_bad_selection_setting_is_refused_before_any_fit(setting, message):
    with pytest.raises(ValueError, match=message):
        crossfit.checked_config("stacked", setting)


def test_a_fold_predicts_its_test_rows_the_same_whatever_their_ratings_are():
    """Rewrite every rating of fold 0's test rows: fold 0's predictions of them do not move."""
    rated = rated_set(contexts=20, per_context=3, seed=4)
    _, _, test_idx = crossfit.kfold_by_context([r.context_id for r in rated], k=5, seed=0)[0]
    tampered = list(rated)
    for i in test_idx:
        tampered[i] = replace(rated[i], score=6.0 - rated[i].score)
    _, clean = crossfit.cross_validate("stacked", rated, folds=5, seed=0, refit=False)
    _, dirty = crossfit.cross_validate("stacked", tampered, folds=5, seed=0, refit=False)
    assert [clean["predictions"][i]["predicted"] for i in test_idx] == [
        dirty["predictions"][i]["predicted"] for i in test_idx
    ]
    # The other folds trained on those rows, so theirs move: the tampering did reach the data.
    assert clean["predictions"] != dirty["predictions"]


def test_two_runs_give_the_same_figures():
    rated = rated_set(contexts=15, per_context=3, seed=6)
    _, first = crossfit.cross_validate("stacked", rated, folds=3, seed=9)
    _, second = crossfit.cross_validate("stacked", rated, folds=3, seed=9)
    assert first["predictions"] == second["predictions"]
    assert first["test"] == second["test"]


def test_a_saved_model_scores_new_responses_as_before(tmp_path):
    rated = rated_set(contexts=12, per_context=3, seed=7)
    model = kinds.get("stacked").new({})
    model.fit(rated[:24], rated[24:], seed=0)
    new = [
        Response(context=("hi",), response="x", features={"quality": q, "noise": 0.0, "flaky": None})
        for q in (0.1, 0.5, 0.9)
    ]
    model.save(tmp_path / "stacked.ckpt")
    loaded = kinds.get("stacked").load(tmp_path / "stacked.ckpt")
    np.testing.assert_array_equal(loaded.predict(new), model.predict(new))
    assert list(loaded.predict(new)) == sorted(loaded.predict(new))  # more quality, higher score


def test_a_checkpoint_of_another_kind_is_refused(tmp_path):
    from scoring.adem import checkpoint

    checkpoint.save(tmp_path / "other.ckpt", kind="learned-cross-encoder", config={}, tensors={})
    with pytest.raises(CheckpointError, match="not a 'learned-stacked' checkpoint"):
        stacked.load(tmp_path / "other.ckpt")


def test_training_rows_without_any_varying_feature_are_refused():
    rated = rated_set(contexts=6, per_context=2, features=False)
    with pytest.raises(ValueError, match="no feature that varies"):
        kinds.get("stacked").new(STORED_ONLY).fit(rated[:8], rated[8:], seed=0)


def test_a_value_beyond_the_training_range_is_scored_as_the_range_edge(tmp_path):
    """A linear stack must not extrapolate: a feature that barely varied in training once sent a
    GRADE response to -35 on a 1-5 scale."""
    rated = rated_set(contexts=20, per_context=3, seed=8)
    model = kinds.get("stacked").new(STORED_ONLY)
    model.fit(rated[:45], rated[45:], seed=0)
    top = max(r.features["quality"] for r in rated[:45])
    base = {"noise": 0.0, "flaky": 0.5}

    def at(quality):
        return Response(context=("hi",), response="x", features={**base, "quality": quality})

    edge, far, inside = model.predict([at(top), at(top + 1000.0), at(top - 0.2)])
    assert far == pytest.approx(edge)
    assert inside < edge  # inside the range the feature still counts
    model.save(tmp_path / "stacked.ckpt")
    assert stacked.load(tmp_path / "stacked.ckpt").predict([at(top + 1000.0)])[0] == pytest.approx(edge)


def test_the_registered_model_says_whether_it_fitted_its_validation_rows():
    rated = rated_set(contexts=12, per_context=3, seed=3)
    _, inner = crossfit.cross_validate("stacked", rated, folds=3, seed=0, config=STORED_ONLY)
    _, validation = crossfit.cross_validate(
        "stacked", rated, folds=3, seed=0, config={**STORED_ONLY, "selection": "validation"}
    )
    assert inner["split"]["fitted_on_validation"] is True
    assert validation["split"]["fitted_on_validation"] is False


def test_inner_folds_too_small_to_vary_fall_back_to_the_validation_rows():
    """Three contexts, the only feature 0, 1, 0 by context: the inner fold that trains on the
    first and the last varies in nothing, the training rows do; the fit chooses on the validation
    rows instead of failing."""
    rated = rated_set(contexts=3, per_context=2, seed=1)
    flat = [replace(r, features={"quality": float(i // 2 % 2)}) for i, r in enumerate(rated)]
    report = kinds.get("stacked").new(STORED_ONLY).fit(flat[:4], flat[4:], seed=0)
    assert report.details["selection"] == "validation"
