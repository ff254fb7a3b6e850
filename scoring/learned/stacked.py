"""The `stacked` kind: a ridge regression over the scores a dataset already has for each response.

A learned combination of metrics (as SALT-NLP's autometrics does): its inputs are the responses'
`features` (metric name -> score: BLEU, ROUGE-L, embedding metrics, MiniLM, judges,
lengths...), its target the human score. Everything it estimates comes from the training rows
it is handed and from nothing else: which features it uses (those the training rows have and
that vary there), the medians that fill a missing score, the range each feature is clipped to,
each feature's centre and spread, and the coefficients. A missing score also sets a 0/1
indicator column, so "this metric could not score it" can carry weight of its own. A value
outside the range the training rows span is clipped to it: a linear model must not extrapolate
from a feature that barely varied in training (BLEU-4 of 2e-5 where the training rows had ~1e-9
was 1,000 spreads out, and one GRADE response was predicted -35 on a 1-5 scale before the clip).

Early stopping is over the regularisation path: the penalty falls step by step from strong to
weak (each step one point of the learning curve) while the validation correlation improves, and
the best step's coefficients are kept; `patience` steps without gain end the walk. By default
(`selection: "inner-cv"`) the model is fitted on the training and validation rows together, and a
step's validation correlation is the pooled out-of-fold Pearson of `inner_folds` folds by context
inside those rows (each inner fit estimating everything from its own rows): every handed row
serves both the fit and the choice. `"validation"` is the older rule, fit on the training rows and
judge each step on the validation rows; on GRADE those are ~18 contexts a fold, and the penalty
they chose swung from 0.1 to 10,000 between folds (docs/learned.md). The ridge is solved in closed
form with numpy, so a whole path takes milliseconds and is exactly repeatable.

With `reference_free` (the default) the kind also reads the reference-free features of each
(context, response) pair (`scoring.learned.reference_free`, names `rf:...`): MiniLM cosines to
the context, a next-utterance head trained on the Chit-Chat corpus, and surface signals. They
are computed from the texts when a fit or a prediction needs them, none is fitted to ratings,
and the served path gets them the same way, so a caller of the scoring API sends nothing more.

Features a model learned from these same ratings (an ADEM trained on the dataset) leak the test
folds' ratings into every fold unless they were themselves computed out of fold: the caller
decides what it feeds in, and the report must say so.
"""

import numpy as np

from scoring.adem import checkpoint
from scoring.adem.splits import folds_by_context
from scoring.learned import reference_free
from scoring.learned.early_stopping import BestSoFar, pearson
from scoring.learned.kinds import FitReport, Kind

CHECKPOINT_KIND = "learned-stacked"
DEFAULTS = {
    "features": None,  # None: every feature the training rows carry; else these names only
    "penalties": [1e4, 3e3, 1e3, 3e2, 1e2, 30.0, 10.0, 3.0, 1.0, 0.3, 0.1],  # strong to weak
    "patience": 3,
    "missing_indicators": True,
    "reference_free": True,  # add the rf: features computed from the texts (reference_free package)
    # Their sentence vectors' precision (reference_free.PRECISIONS); a model scores with the
    # precision it was fitted on.
    "feature_precision": reference_free.DEFAULT_PRECISION,
    # How the penalty is chosen: "inner-cv" fits on the training and validation rows together and
    # picks the penalty by `inner_folds` folds by context inside them; "validation" fits on the
    # training rows and picks it on the validation rows alone (~18 contexts a fold on GRADE: noisy).
    "selection": "inner-cv",
    "inner_folds": 5,
}
SELECTIONS = ("inner-cv", "validation")
REFERENCE_FREE_PREFIX = "rf:"
ARRAYS = ("medians", "centre", "spread", "coefficients")
RANGE = ("low", "high")  # absent from checkpoints saved before values were clipped


def default_config():
    return dict(DEFAULTS)


def _matrix(features, names):
    return np.array(
        [[np.nan if f.get(n) is None else float(f[n]) for n in names] for f in features],
        dtype=np.float64,
    ).reshape(len(features), len(names))


def feature_dicts(rows, *, with_reference_free, precision=reference_free.DEFAULT_PRECISION):
    """Each row's features, with its reference-free ones (computed from its texts) when asked for."""
    if not with_reference_free:
        return [r.features for r in rows]
    from scoring.learned.reference_free.features import reference_free_features  # torch: only when used

    extras = reference_free_features(rows, precision=precision)
    return [{**r.features, **extra} for r, extra in zip(rows, extras, strict=True)]


def _design(raw, state):
    filled = np.where(np.isnan(raw), state["medians"], raw)
    if "low" in state:  # checkpoints saved before the clip have no range
        filled = np.clip(filled, state["low"], state["high"])
    flags = np.isnan(raw[:, state["indicators"]]).astype(np.float64)
    return np.hstack([filled, flags])


def _standardised(state, features):
    return (_design(_matrix(features, state["names"]), state) - state["centre"]) / state["spread"]


def _predict(state, features):
    return _standardised(state, features) @ state["coefficients"] + state["intercept"]


class _InnerFoldTooSmall(Exception):
    """An inner fold's training rows carry no feature that varies (a tiny set): fold no further."""


class _RidgePath:
    """Ridge fits of one set of rows at any penalty: every estimate but the coefficients (the
    features kept, medians, ranges, centres, spreads, intercept) comes from these rows, once."""

    def __init__(self, features, y, config):
        names = config["features"] or sorted({n for f in features for n in f})
        raw = _matrix(features, names)
        present = ~np.isnan(raw)
        # A feature no row has, or one that never varies there, can teach nothing.
        varies = np.array([present[:, j].any() and np.nanstd(raw[:, j]) > 1e-12 for j in range(len(names))], bool)
        names = [n for n, keep in zip(names, varies, strict=True) if keep]
        if not names:
            raise ValueError("the training rows carry no feature that varies: nothing to stack")
        raw, present = raw[:, varies], present[:, varies]
        medians = np.nanmedian(raw, axis=0)
        indicators = (~present).any(axis=0) if config["missing_indicators"] else np.zeros(len(names), bool)
        state = {
            "names": names,
            "medians": medians,
            "indicators": indicators,
            "low": np.nanmin(raw, axis=0),
            "high": np.nanmax(raw, axis=0),
        }
        x = _design(raw, state)
        state["centre"], state["spread"] = x.mean(axis=0), np.where(x.std(axis=0) > 1e-12, x.std(axis=0), 1.0)
        state["intercept"] = float(y.mean())
        self.state, self.x, self.y = state, (x - state["centre"]) / state["spread"], y
        self._gram, self._moment = self.x.T @ self.x, self.x.T @ (y - y.mean())
        self._solved = {}

    def standardised(self, features):
        return _standardised(self.state, features)

    def coefficients(self, penalty):
        if penalty not in self._solved:
            self._solved[penalty] = np.linalg.solve(self._gram + penalty * np.eye(len(self._gram)), self._moment)
        return self._solved[penalty]

    def state_at(self, penalty):
        return {**self.state, "coefficients": self.coefficients(penalty), "penalty": float(penalty)}

    def train_loss(self, penalty):
        return float(np.mean((self.x @ self.coefficients(penalty) + self.state["intercept"] - self.y) ** 2))


class Stacked:
    kind = "stacked"

    def __init__(self, config, *, state=None):
        self.config = {**DEFAULTS, **config}
        reference_free.check_precision(self.config["feature_precision"])
        if self.config["selection"] not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, not {self.config['selection']!r}")
        folds = self.config["inner_folds"]
        if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
            raise ValueError(f"inner_folds must be a whole number of at least 2, not {folds!r}")
        self.state = state  # names, medians, indicators, centre, spread, coefficients, intercept

    def fit(self, train, val, *, seed, progress=None):
        if self.config["selection"] == "inner-cv":
            rows = list(train) + list(val)
            contexts = len({r.context_id for r in rows})
            if contexts >= 2:
                try:
                    return self._fit_by_inner_folds(rows, min(self.config["inner_folds"], contexts), seed, progress)
                except _InnerFoldTooSmall:
                    pass
        # "validation", or too few rows to fold: the penalty is chosen on the validation rows.
        y_train = np.array([r.score for r in train], dtype=np.float64)
        path = _RidgePath(self._features(train, self.config["reference_free"]), y_train, self.config)
        held_out = [(path, path.standardised(self._features(val, self.config["reference_free"])), np.arange(len(val)))]
        y_val = np.array([r.score for r in val], dtype=np.float64)
        return self._walk(path, held_out, y_val, progress, {"selection": "validation", "fitted_on_validation": False})

    def _fit_by_inner_folds(self, rows, inner_folds, seed, progress):
        """Fit on every row handed (training and validation contexts), the penalty chosen by the
        pooled correlation of `inner_folds` folds by context inside those rows."""
        features = self._features(rows, self.config["reference_free"])
        y = np.array([r.score for r in rows], dtype=np.float64)
        held_out = []
        for train_idx, test_idx in folds_by_context([r.context_id for r in rows], k=inner_folds, seed=seed):
            try:
                path = _RidgePath([features[i] for i in train_idx], y[train_idx], self.config)
            except ValueError as error:  # an inner fold's rows, a fraction of the whole, vary in nothing
                raise _InnerFoldTooSmall from error
            held_out.append((path, path.standardised([features[i] for i in test_idx]), test_idx))
        details = {"selection": "inner-cv", "inner_folds": inner_folds, "fitted_on_validation": True}
        return self._walk(_RidgePath(features, y, self.config), held_out, y, progress, details)

    def _walk(self, path, held_out, y_held, progress, details):
        """The regularisation path from strong to weak: each step a point of the learning curve,
        `patience` steps without a better validation correlation end it; the best step is kept.

        `held_out`: (path, standardised held-out rows, their places in `y_held`) triples; a step's
        validation correlation is that of their predictions pooled (one triple: the validation rows;
        several: the inner folds)."""
        best, curve = BestSoFar(self.config["patience"]), []
        for step, penalty in enumerate(self.config["penalties"], start=1):
            self.state = path.state_at(penalty)
            train_loss = path.train_loss(penalty)
            pooled = np.empty(len(y_held), dtype=np.float64)
            for fold_path, x_held, places in held_out:
                pooled[places] = x_held @ fold_path.coefficients(penalty) + fold_path.state["intercept"]
            val_pearson = pearson(pooled, y_held)
            curve.append(
                {"epoch": step, "penalty": float(penalty), "train_loss": train_loss, "val_pearson": val_pearson}
            )
            if progress is not None:
                progress(step, train_loss, val_pearson)
            if best.update(step, val_pearson, lambda: dict(self.state)):
                break
        self.state = best.state
        return FitReport(curve=curve, best_epoch=best.best_epoch, details={"penalty": self.state["penalty"], **details})

    def _features(self, rows, with_reference_free):
        return feature_dicts(rows, with_reference_free=with_reference_free, precision=self.config["feature_precision"])

    def predict(self, responses, *, progress=None):
        responses = list(responses)
        if not responses:
            return np.zeros(0, dtype=np.float64)
        s = self.state
        # A model that learned no rf: weight (or was saved before they existed) skips computing them.
        wanted = self.config["reference_free"] and any(n.startswith(REFERENCE_FREE_PREFIX) for n in s["names"])
        out = self._predict_features(self._features(responses, wanted))
        if progress is not None:
            progress(len(responses), len(responses))
        return out

    def _predict_features(self, features):
        return _predict(self.state, features)

    def weights(self):
        """{column: coefficient on the standardised column}: what the model leans on."""
        s = self.state
        columns = s["names"] + [f"{n} missing" for n, flag in zip(s["names"], s["indicators"], strict=True) if flag]
        return dict(zip(columns, s["coefficients"].tolist(), strict=True))

    def save(self, path, *, extra=None):
        s = self.state
        config = {
            "config": self.config,
            "names": s["names"],
            "intercept": s["intercept"],
            "penalty": s["penalty"],
            "extra": extra or {},
        }
        tensors = {k: np.asarray(s[k], dtype=np.float64) for k in (*ARRAYS, *RANGE) if k in s}
        tensors["indicators"] = np.asarray(s["indicators"], dtype=np.uint8)
        return checkpoint.save(path, kind=CHECKPOINT_KIND, config=config, tensors=tensors)


def load(path):
    config, tensors = checkpoint.load(path, kind=CHECKPOINT_KIND)
    try:
        state = {k: tensors[k].numpy() for k in ARRAYS}
        state.update({k: tensors[k].numpy() for k in RANGE if k in tensors})
        state["indicators"] = tensors["indicators"].numpy().astype(bool)
        state.update(names=list(config["names"]), intercept=float(config["intercept"]), penalty=config["penalty"])
        width = len(state["names"]) + int(state["indicators"].sum())
        if len(state["medians"]) != len(state["names"]) or len(state["coefficients"]) != width:
            raise ValueError("the arrays do not match the feature names")
    except (KeyError, TypeError, ValueError) as error:
        raise checkpoint.CheckpointError(f"{path} does not hold a usable stacked model ({error})") from error
    # Saved before the precision was a setting: fitted on float32 vectors, whatever today's default.
    return Stacked({"feature_precision": reference_free.LEGACY_PRECISION, **config["config"]}, state=state)


KIND = Kind(
    name="stacked",
    description=(
        "Ridge regression over the scores the dataset already has (metrics, judges, lengths) "
        "and reference-free features of the texts."
    ),
    new=Stacked,
    load=load,
    default_config=default_config,
)
