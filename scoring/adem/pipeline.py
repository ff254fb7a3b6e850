"""From rated triples to a trained, evaluated ADEM: encode, split by context, PCA, fit, score.

Everything is plain Python/numpy in and out. `Scorer` is the trained artifact (PCA +
matrices + which encoder), saved and loaded through `checkpoint.py`.
"""

from dataclasses import dataclass

import numpy as np

from scoring.adem import checkpoint
from scoring.adem.cache import encode
from scoring.adem.debias import debias_indices
from scoring.adem.encoders.flat import tokenize
from scoring.adem.evaluate import correlations, system_level
from scoring.adem.model import Adem
from scoring.adem.pca import Pca
from scoring.adem.splits import kfold_by_context, split_by_context
from scoring.adem.training import TrainConfig, fit, predict

CHECKPOINT_KIND = "adem"


@dataclass
class Example:
    context: list  # turns, oldest first
    reference: str
    response: str
    score: float
    context_id: str
    system: str
    response_id: object = None


@dataclass
class Vectors:
    c: np.ndarray
    r: np.ndarray
    rh: np.ndarray

    def take(self, idx):
        return self.c[idx], self.r[idx], self.rh[idx]


def encode_triples(encoder, contexts, references, responses, *, cache=None, progress=None):
    """Raw encoder vectors for parallel lists of contexts (turn lists), references, responses.

    `progress(part, done, total)` hears each part's encoding ("contexts", "references",
    "responses"): the texts of it the cache lacked, done of total."""

    def part(name):
        return None if progress is None else (lambda done, total: progress(name, done, total))

    return Vectors(
        c=encode(encoder, list(contexts), kind="context", cache=cache, progress=part("contexts")),
        r=encode(encoder, list(references), kind="text", cache=cache, progress=part("references")),
        rh=encode(encoder, list(responses), kind="text", cache=cache, progress=part("responses")),
    )


def encode_examples(examples, encoder, *, cache=None, progress=None):
    return encode_triples(
        encoder,
        [e.context for e in examples],
        [e.reference for e in examples],
        [e.response for e in examples],
        cache=cache,
        progress=progress,
    )


class Scorer:
    """A trained ADEM: PCA fitted on its training vectors, the bilinear model, its encoder's id."""

    def __init__(self, *, pca, model, config, encoder_name, encoder_id):
        self.pca = pca
        self.model = model
        self.config = config
        self.encoder_name = encoder_name
        self.encoder_id = encoder_id

    def score_vectors(self, vectors):
        return predict(self.model, *(self.pca.transform(v) for v in (vectors.c, vectors.r, vectors.rh)))

    def score(self, triples, encoder, *, cache=None):
        """Scores for (context turns, reference, response) triples."""
        if encoder.id != self.encoder_id:
            raise ValueError(f"this model was trained with encoder {self.encoder_id}, not {encoder.id}")
        triples = list(triples)
        if not triples:
            return np.zeros(0, dtype=np.float32)
        contexts, references, responses = zip(*triples, strict=True)
        return self.score_vectors(encode_triples(encoder, contexts, references, responses, cache=cache))

    def save(self, path, *, extra=None):
        config = {
            "train": self.config.as_dict(),
            "encoder": self.encoder_name,
            "encoder_id": self.encoder_id,
            "dim": self.model.dim,
            "extra": extra or {},
        }
        tensors = {f"pca.{k}": v for k, v in self.pca.state().items()}
        tensors.update({f"model.{k}": v for k, v in self.model.state_dict().items()})
        return checkpoint.save(path, kind=CHECKPOINT_KIND, config=config, tensors=tensors)

    @classmethod
    def load(cls, path):
        config, tensors = checkpoint.load(path, kind=CHECKPOINT_KIND)
        try:
            train = TrainConfig.from_dict(config["train"])
            pca = Pca.from_state({k[4:]: v.numpy() for k, v in tensors.items() if k.startswith("pca.")})
            model = Adem(int(config["dim"]), train.variant)
            model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")}, strict=True)
            if pca.n_components != model.dim:
                raise ValueError(f"PCA has {pca.n_components} components but the model expects {model.dim}")
            encoder_name, encoder_id = config["encoder"], config["encoder_id"]
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise checkpoint.CheckpointError(f"{path} does not match this ADEM model ({error})") from error
        model.eval()
        return cls(pca=pca, model=model, config=train, encoder_name=encoder_name, encoder_id=encoder_id)


def fit_scorer(examples, vectors, train_idx, val_idx, config, *, seed, encoder, progress=None):
    """PCA on the training vectors, then ADEM on the (optionally length-debiased) training set."""
    c, r, rh = vectors.take(train_idx)
    pca = Pca.fit(np.concatenate([c, r, rh]), n=config.pca_dim)
    y = np.array([examples[i].score for i in train_idx], dtype=np.float32)
    rows = np.arange(len(train_idx))
    if config.debias_length:
        lengths = [len(tokenize(examples[i].response)) for i in train_idx]
        rows = debias_indices(lengths, y, seed=seed)
    train = (pca.transform(c[rows]), pca.transform(r[rows]), pca.transform(rh[rows]), y[rows])
    vc, vr, vrh = vectors.take(val_idx)
    vy = np.array([examples[i].score for i in val_idx], dtype=np.float32)
    val = (pca.transform(vc), pca.transform(vr), pca.transform(vrh), vy)
    result = fit(train, val, config, seed=seed, progress=progress)
    scorer = Scorer(pca=pca, model=result.model, config=config, encoder_name=encoder[0], encoder_id=encoder[1])
    return scorer, result


def _scale(examples):
    scores = [e.score for e in examples]
    return (float(np.floor(min(scores))), float(np.ceil(max(scores))))


def _test_figures(examples, idx, predicted):
    human = [examples[i].score for i in idx]
    return {
        "test": correlations(predicted, human),
        "system_level": system_level(predicted, human, [examples[i].system for i in idx]),
    }


def train_and_evaluate(examples, vectors, config, *, seed, encoder, folds=None, progress=None):
    """(scorer, results). One 70/15/15 split by context, or k folds with pooled test predictions.

    With folds, `results["test"]` is over every example, each predicted by the fold model that
    never saw its context; the returned scorer is then refitted on all contexts (15% held out
    for early stopping) so the registered model uses all the data.
    """
    if config.scale is None:
        # The rating scale as the data shows it, so initial predictions span it (α, β).
        config.scale = _scale(examples)
    context_ids = [e.context_id for e in examples]
    if not folds:
        train_idx, val_idx, test_idx = split_by_context(context_ids, seed=seed)
        scorer, result = fit_scorer(
            examples, vectors, train_idx, val_idx, config, seed=seed, encoder=encoder, progress=progress
        )
        predicted = scorer.score_vectors(Vectors(*vectors.take(test_idx)))
        results = _test_figures(examples, test_idx, predicted)
        results.update(
            curve=result.curve,
            best_epoch=result.best_epoch,
            split={"train": len(train_idx), "validation": len(val_idx), "test": len(test_idx)},
            predictions=_predictions(examples, test_idx, predicted),
        )
        return scorer, results
    pooled = np.zeros(len(examples), dtype=np.float32)
    fold_results = []
    for k, (train_idx, val_idx, test_idx) in enumerate(kfold_by_context(context_ids, k=folds, seed=seed)):
        scorer, result = fit_scorer(examples, vectors, train_idx, val_idx, config, seed=seed + k, encoder=encoder)
        pooled[test_idx] = scorer.score_vectors(Vectors(*vectors.take(test_idx)))
        best = result.curve[result.best_epoch - 1]
        fold_results.append(
            {"fold": k, "best_epoch": result.best_epoch, "val_pearson": best["val_pearson"], "test_n": len(test_idx)}
        )
    everything = np.arange(len(examples))
    results = _test_figures(examples, everything, pooled)
    train_idx, val_idx, _ = _all_but_validation(context_ids, seed)
    # Live progress follows this last fit only, so the learning curve has one x axis.
    scorer, result = fit_scorer(
        examples, vectors, train_idx, val_idx, config, seed=seed, encoder=encoder, progress=progress
    )
    results.update(
        folds=fold_results,
        curve=result.curve,
        best_epoch=result.best_epoch,
        split={"folds": folds, "train": len(train_idx), "validation": len(val_idx), "test": len(examples)},
        predictions=_predictions(examples, everything, pooled),
    )
    return scorer, results


def _all_but_validation(context_ids, seed, validation_fraction=0.15):
    """Train on all contexts except a validation slice kept for early stopping."""
    unique = sorted(set(context_ids))
    order = np.random.default_rng(seed).permutation(len(unique))
    n_val = max(1, round(len(unique) * validation_fraction))
    val = {unique[i] for i in order[:n_val]}
    train_idx = np.array([i for i, c in enumerate(context_ids) if c not in val], dtype=np.int64)
    val_idx = np.array([i for i, c in enumerate(context_ids) if c in val], dtype=np.int64)
    return train_idx, val_idx, None


def _predictions(examples, idx, predicted):
    return [
        {
            "response_id": examples[i].response_id,
            "context_id": examples[i].context_id,
            "system": examples[i].system,
            "human": float(examples[i].score),
            "predicted": float(p),
        }
        for i, p in zip(idx, predicted, strict=True)
    ]
