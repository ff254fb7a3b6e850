"""The out-of-fold protocol every learned evaluator is trained and measured with."""

import numpy as np
import pytest

from scoring.adem.splits import kfold_by_context
from scoring.learned import crossfit, kinds
from scoring.learned.kinds import FitReport, Kind
from tests.scoring.learned.generated import rated_set


class ContextMemoriser:
    """Predicts the mean score its training rows had for the same context (else the training mean).

    On context-disjoint folds it cannot know a test context; had one leaked into training, it
    would predict that context's ratings almost exactly. It also records what it was handed.
    """

    fits = []

    def __init__(self, config):
        self.config = config

    def fit(self, train, val, *, seed, progress=None):
        by_context = {}
        for row in train:
            by_context.setdefault(row.context_id, []).append(row.score)
        self.means = {c: float(np.mean(s)) for c, s in by_context.items()}
        self.overall = float(np.mean([r.score for r in train]))
        ContextMemoriser.fits.append({"train": {r.context_id for r in train}, "val": {r.context_id for r in val}})
        if progress is not None:
            progress(1, 0.0, 0.0)
        return FitReport(curve=[{"epoch": 1, "train_loss": 0.0, "val_pearson": 0.0}], best_epoch=1)

    def predict(self, responses, *, progress=None):
        return np.array([self.means.get(r.context_id, self.overall) for r in responses])


@pytest.fixture
def memoriser():
    ContextMemoriser.fits = []
    kinds.register(Kind("memoriser", "test double", ContextMemoriser, load=None, default_config=dict))
    yield ContextMemoriser
    kinds.unregister("memoriser")


def _leaky_folds(context_ids, *, k, seed=0, validation_fraction=0.15):
    """ADEM's folds, with each test fold's contexts also put into its training set."""
    return [
        (np.concatenate([train, test]), val, test)
        for train, val, test in kfold_by_context(context_ids, k=k, seed=seed, validation_fraction=validation_fraction)
    ]


def test_no_fold_trains_or_stops_on_a_context_it_is_tested_on(memoriser):
    rated = rated_set(contexts=20, per_context=3, context_effect=2.0)
    _, results = crossfit.cross_validate("memoriser", rated, folds=5, seed=3, refit=False)
    test_contexts = [
        {rated[i].context_id for i in test}
        for _, _, test in kfold_by_context([r.context_id for r in rated], k=5, seed=3)
    ]
    assert len(memoriser.fits) == 5
    for fit, tested in zip(memoriser.fits, test_contexts, strict=True):
        assert not fit["train"] & tested
        assert not fit["val"] & tested
    # Scores here are mostly the context's offset; a model that cannot see a test context predicts
    # nothing of it.
    assert abs(results["test"]["spearman"]) < 0.5


def test_a_split_that_leaks_a_test_context_stops_the_run(memoriser, monkeypatch):
    rated = rated_set(contexts=20, per_context=3, context_effect=2.0)
    monkeypatch.setattr(crossfit, "kfold_by_context", _leaky_folds)
    with pytest.raises(crossfit.LeakError, match="test context"):
        crossfit.cross_validate("memoriser", rated, folds=5, seed=3, refit=False)


def test_without_the_guard_a_leaky_split_would_flatter_the_memoriser(memoriser, monkeypatch):
    """What the two tests above protect against: the same run, leaked, looks excellent."""
    rated = rated_set(contexts=20, per_context=3, context_effect=2.0)
    monkeypatch.setattr(crossfit, "kfold_by_context", _leaky_folds)
    monkeypatch.setattr(crossfit, "check_disjoint", lambda *args: None)
    _, results = crossfit.cross_validate("memoriser", rated, folds=5, seed=3, refit=False)
    assert results["test"]["spearman"] > 0.8


def test_every_response_is_predicted_once_by_a_fold_model_and_progress_names_each_fit(memoriser):
    rated = rated_set(contexts=10, per_context=2)
    steps = []
    final, results = crossfit.cross_validate("memoriser", rated, folds=5, seed=0, progress=steps.append)
    assert results["test"]["n"] == len(rated)
    assert [p["response_id"] for p in results["predictions"]] == [r.response_id for r in rated]
    assert all(np.isfinite(p["predicted"]) for p in results["predictions"])
    assert sum(f["test_n"] for f in results["folds"]) == len(rated)
    assert [(s.stage, s.fold) for s in steps] == [("fold", k) for k in range(5)] + [("final", None)]
    assert isinstance(final, ContextMemoriser)
    # The final model trains on every context but fold 0's validation slice.
    assert results["split"]["train"] + results["split"]["validation"] == len(rated)


def test_the_registry_names_both_kinds_and_refuses_an_unknown_one():
    assert {"cross-encoder", "stacked"} <= set(kinds.names())
    assert kinds.get("stacked").name == "stacked"
    with pytest.raises(ValueError, match="unknown evaluator kind"):
        kinds.get("oracle")
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(Kind("stacked", "again", None, None, dict))


def test_a_setting_the_kind_does_not_have_is_refused_before_any_training():
    with pytest.raises(ValueError, match="has no setting epochs"):
        crossfit.cross_validate("stacked", rated_set(contexts=6), folds=2, config={"epochs": 3})
