"""The stacked evaluator: a ridge over existing scores, fitted on the training folds only."""

from dataclasses import replace

import numpy as np
import pytest

from scoring.adem.checkpoint import CheckpointError
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
        # Medians, centres and spreads are the training rows' own.
        names = model.state["names"]
        features = stacked.feature_dicts(train, with_reference_free=True)  # stored scores and rf: ones
        matrix = np.array([[np.nan if f[n] is None else f[n] for n in names] for f in features])
        np.testing.assert_allclose(model.state["medians"], np.nanmedian(matrix, axis=0))
        filled = np.where(np.isnan(matrix), model.state["medians"], matrix)
        np.testing.assert_allclose(model.state["centre"][: len(names)], filled.mean(axis=0))
        assert model.state["intercept"] == pytest.approx(np.mean([r.score for r in train]))


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
