"""Fine-tuning and serving the cross-encoder: AdamW with warm-up and linear decay, early stopping.

Targets are standardised with the training rows' mean and spread, so the head starts at the
centre of the scale whatever the scale is; predictions are mapped back. Training batches are
drawn in a seeded order, and the whole fit runs inside `determinism.deterministic`, so one seed
gives one model. Scoring sorts responses by length and batches them within a token budget
(`token_batches`, as the MiniLM encoder does), which keeps padding, and so CPU time, low.
"""

import hashlib
import math

import numpy as np
import torch

from scoring.adem import checkpoint
from scoring.adem.encoders import minilm
from scoring.adem.encoders.minilm import token_batches
from scoring.adem.encoders.onnx_minilm import source_digest
from scoring.learned.cross_encoder import frozen_states, inputs, network
from scoring.learned.determinism import DEFAULT_THREADS, deterministic
from scoring.learned.early_stopping import BestSoFar, pearson
from scoring.learned.kinds import FitReport, Kind

CHECKPOINT_KIND = "learned-cross-encoder"
# lr, batch and epochs: chosen on a validation slice, never a test fold. With lr 4e-5, batch 16
# and 3 epochs a fold of a 300-response set made ~36 updates and stayed near its starting point
# (validation r 0.16); lr 1e-4 with batch 8 reached validation r 0.41 on the same fold. A fourth
# epoch gives early stopping room; patience 1 stops the first epoch that does not improve.
# The lower half of the network is frozen: its states are computed once per fit instead of in
# every step (docs/learned.md has the time and the correlations with and without).
FROZEN_LAYERS = 3
DEFAULTS = {
    "max_epochs": 4,
    "patience": 1,
    "lr": 1e-4,
    "head_lr": 1e-3,
    "weight_decay": 0.01,
    "warmup": 0.1,  # fraction of the steps spent warming the learning rate up
    "batch_size": 8,
    "max_length": 128,
    "response_tokens": 48,
    "reference_tokens": 32,
    "use_reference": True,
    "dropout": 0.1,
    # The packaged model drops 10% of attention probabilities in training. On a CPU that dropout is
    # a quarter of an epoch (its random mask, 12 x length^2 draws per sequence a layer, costs 8x the
    # attention itself) and it bought nothing measurable: off, 5 folds on 3,000 responses took
    # 952 s instead of 1,196 s, and the shared sets' figures moved within their fold noise
    # (docs/learned.md). The hidden states' dropout stays.
    "attention_dropout": 0.0,
    "layers": None,  # None: all six; fewer only for small test models
    "freeze_word_embeddings": True,
    "frozen_layers": FROZEN_LAYERS,
    "threads": DEFAULT_THREADS,
    "score_batch_tokens": 2048,
    # Scoring (never training) runs its matrix products in bfloat16 where the CPU multiplies it
    # natively ("auto", as ADEM and the stacked kind's vectors do): 1.55x faster on the 2-core AMD
    # EPYC (2,000 responses in 16.0 s against 24.5 s), scores within 0.003 of float32's. "float32"
    # scores exactly as the fit's validation rows were scored.
    "scoring_precision": "auto",
}
SCORING_PRECISIONS = ("auto", "float32")
LEGACY_SCORING_PRECISION = "float32"  # what a model saved before this setting was scored in


def default_config():
    return dict(DEFAULTS)


def length_buckets(encoded, batch_size, generator, pool=8):
    """Training batches in a seeded random order, each of rows of similar length.

    Rows are shuffled, cut into pools of `pool` batches, sorted by length within a pool and cut
    into batches, whose order is shuffled again: batches stay random, but a batch pads little
    (random batches of these inputs were about a third padding)."""
    order = torch.randperm(len(encoded), generator=generator).tolist()
    batches = []
    for start in range(0, len(order), batch_size * pool):
        chunk = sorted(order[start : start + batch_size * pool], key=lambda i: len(encoded[i][0]))
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


class CrossEncoder:
    kind = "cross-encoder"

    def __init__(self, config, *, model=None, target=(0.0, 1.0)):
        self.config = {**DEFAULTS, **config}
        if self.config["scoring_precision"] not in SCORING_PRECISIONS:
            raise ValueError(
                f"scoring_precision must be one of {', '.join(SCORING_PRECISIONS)}, "
                f"not {self.config['scoring_precision']!r}"
            )
        self.model = model
        self.target = target  # (mean, std) of the training scores

    def _encode(self, responses):
        c = self.config
        return inputs.encode(
            responses,
            max_length=c["max_length"],
            response_tokens=c["response_tokens"],
            reference_tokens=c["reference_tokens"],
            use_reference=c["use_reference"],
        )

    def fit(self, train, val, *, seed, progress=None):
        with deterministic(seed, threads=self.config["threads"]):
            return self._fit(train, val, seed=seed, progress=progress)

    def _fit(self, train, val, *, seed, progress):
        c = self.config
        self.model = network.build(
            layers=c["layers"],
            dropout=c["dropout"],
            freeze_word_embeddings=c["freeze_word_embeddings"],
            frozen_layers=c["frozen_layers"],
            attention_dropout=c["attention_dropout"],
        )
        y = np.array([r.score for r in train], dtype=np.float64)
        self.target = (float(y.mean()), float(y.std()) or 1.0)
        target = torch.tensor((y - self.target[0]) / self.target[1], dtype=torch.float32)
        encoded = self._encode(train)
        val_scores = [r.score for r in val]
        steps_per_epoch = math.ceil(len(train) / c["batch_size"])
        optimiser, schedule = self._optimiser(steps_per_epoch * c["max_epochs"])
        generator = torch.Generator().manual_seed(seed)
        pad_id = inputs.tokenizer().pad_token_id
        step_inputs = self._step_inputs(encoded, pad_id)
        predict_val = self._repeated_predictor(val, pad_id)
        best, curve = BestSoFar(c["patience"]), []
        for epoch in range(1, c["max_epochs"] + 1):
            self.model.train()
            total = 0.0
            for rows in length_buckets(encoded, c["batch_size"], generator):
                batch = torch.tensor(rows)
                loss = torch.nn.functional.mse_loss(step_inputs(rows), target[batch])
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                optimiser.step()
                schedule.step()
                total += loss.item() * len(rows)
            val_pearson = pearson(predict_val(), val_scores)
            point = {"epoch": epoch, "train_loss": total / len(train), "val_pearson": val_pearson}
            curve.append(point)
            if progress is not None:
                progress(epoch, point["train_loss"], val_pearson)
            if best.update(epoch, val_pearson, self._snapshot):
                break
        self.model.load_state_dict(best.state)
        self.model.eval()
        return FitReport(curve=curve, best_epoch=best.best_epoch)

    def _frozen_states(self, encoded, pad_id, *, keep=True):
        return frozen_states.states(
            self.model, encoded, pad_id, max_tokens=self.config["score_batch_tokens"], keep=keep
        )

    def _scores_from_states(self, states):
        """Standardised scores of sequences from their frozen layers' states, in length-sorted batches."""
        out = np.zeros(len(states), dtype=np.float64)
        batches = token_batches([len(s) for s in states], max_tokens=self.config["score_batch_tokens"], max_texts=256)
        self.model.eval()
        with torch.inference_mode():
            for rows in batches:
                out[rows] = self.model.top(*network.pad_states([states[i] for i in rows])).double().numpy()
        return out

    def _repeated_predictor(self, responses, pad_id):
        """`predict(responses)` for rows scored after every epoch (the validation rows): their frozen
        layers' states are looked up once per fit, and each call runs the trained layers only."""
        if not self.model.frozen_layers or not responses:
            return lambda: self._predict(responses)
        states = self._frozen_states(self._encode(responses), pad_id)
        return lambda: self._scores_from_states(states) * self.target[1] + self.target[0]

    def _step_inputs(self, encoded, pad_id):
        """`predictions(rows)` for a training step: from the frozen layers' states when there are any."""
        if not self.model.frozen_layers:
            return lambda rows: self.model(*network.pad([encoded[i] for i in rows], pad_id))
        by_row = self._frozen_states(encoded, pad_id)
        return lambda rows: self.model.top(*network.pad_states([by_row[i] for i in rows]))

    def _optimiser(self, total_steps):
        c = self.config
        head = list(self.model.head.parameters())
        body = [p for n, p in self.model.named_parameters() if p.requires_grad and not n.startswith("head.")]
        optimiser = torch.optim.AdamW(
            [{"params": body, "lr": c["lr"]}, {"params": head, "lr": c["head_lr"]}], weight_decay=c["weight_decay"]
        )
        warmup = max(1, round(total_steps * c["warmup"]))

        def factor(step):
            if step < warmup:
                return (step + 1) / warmup
            return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

        return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, factor)

    def _snapshot(self):
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def scores_in_bfloat16(self):
        return minilm.resolved_precision(self.config["scoring_precision"], "cpu") == "bfloat16"

    def predict(self, responses, *, progress=None):
        """Scores on the training scale, in the configured `scoring_precision`."""
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.scores_in_bfloat16()):
            return self._predict(responses, progress=progress)

    def _predict(self, responses, *, progress=None):
        """Scores in length-sorted batches of at most `score_batch_tokens`; float32 unless the caller
        autocasts (a fit scores its validation rows here, always in float32)."""
        responses = list(responses)
        out = np.zeros(len(responses), dtype=np.float64)
        if not responses:
            return out
        encoded = self._encode(responses)
        batches = token_batches(
            [len(ids) for ids, _ in encoded], max_tokens=self.config["score_batch_tokens"], max_texts=256
        )
        pad_id = inputs.tokenizer().pad_token_id
        self.model.eval()
        done = 0
        for rows in batches:
            if self.model.frozen_layers:
                # Scoring reads kept states but keeps none: a served model's texts would only fill memory.
                states = self._frozen_states([encoded[i] for i in rows], pad_id, keep=False)
                with torch.inference_mode():
                    out[rows] = self.model.top(*network.pad_states(states)).double().numpy()
            else:
                with torch.inference_mode():
                    out[rows] = self.model(*network.pad([encoded[i] for i in rows], pad_id)).double().numpy()
            done += len(rows)
            if progress is not None:
                progress(done, len(responses))
        return out * self.target[1] + self.target[0]

    def save(self, path, *, extra=None):
        state = self.model.state_dict()
        frozen = {network.FROZEN} if self.config["freeze_word_embeddings"] else set()
        tensors = {k: v for k, v in state.items() if k not in frozen}
        config = {
            "config": self.config,
            "target": list(self.target),
            "base_digest": source_digest(inputs.model_path()),
            "frozen": sorted(frozen),
            "extra": extra or {},
        }
        return checkpoint.save(path, kind=CHECKPOINT_KIND, config=config, tensors=tensors)


def load(path):
    config, tensors = checkpoint.load(path, kind=CHECKPOINT_KIND)
    try:
        if config["base_digest"] != source_digest(inputs.model_path()):
            raise ValueError("it was fine-tuned from other all-MiniLM-L6-v2 weights than the packaged ones")
        settings = {**DEFAULTS, "scoring_precision": LEGACY_SCORING_PRECISION, **config["config"]}
        model = network.build(
            layers=settings["layers"],
            dropout=settings["dropout"],
            freeze_word_embeddings=settings["freeze_word_embeddings"],
            frozen_layers=settings["frozen_layers"],
            attention_dropout=settings["attention_dropout"],
        )
        missing, unexpected = model.load_state_dict(tensors, strict=False)
        if unexpected or set(missing) != set(config["frozen"]):
            raise ValueError(f"weights do not match the network (missing {missing}, unexpected {unexpected})")
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise checkpoint.CheckpointError(f"{path} does not hold a usable cross-encoder ({error})") from error
    model.eval()
    return CrossEncoder(settings, model=model, target=tuple(config["target"]))


def fingerprint(evaluator):
    """A digest of every weight, so tests and benches can say two fits gave one model."""
    digest = hashlib.sha256()
    for name, value in sorted(evaluator.model.state_dict().items()):
        digest.update(name.encode())
        digest.update(value.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


KIND = Kind(
    name="cross-encoder",
    description="all-MiniLM-L6-v2 fine-tuned end to end on (context, response, reference) -> score.",
    new=CrossEncoder,
    load=load,
    default_config=default_config,
    release=frozen_states.forget,
)
