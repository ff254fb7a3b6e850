"""Fitting ADEM: squared error to the human score + γ‖θ‖², Adam, early stopping on validation.

Works on PCA-reduced vectors; `pipeline.py` does the encoding, PCA and splitting around it.
The matrices are 50×50, so training runs on the CPU: moving them to a GPU costs more than
it saves.
"""

from dataclasses import asdict, dataclass

import numpy as np
import torch
from scipy import stats

from scoring.adem.model import build


@dataclass
class TrainConfig:
    variant: str = "full"
    pca_dim: int = 50
    gamma: float = 0.075
    lr: float = 0.01
    batch_size: int = 32
    max_epochs: int = 200
    patience: int = 15
    debias_length: bool = False
    scale: tuple | None = None  # (low, high) of the rating scale; None: taken from the training scores

    def as_dict(self):
        out = asdict(self)
        out["scale"] = list(self.scale) if self.scale else None
        return out

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        if data.get("scale"):
            data["scale"] = tuple(data["scale"])
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class FitResult:
    model: object
    curve: list  # one dict per epoch: {"epoch", "train_loss", "val_loss", "val_pearson"}
    best_epoch: int


def _pearson(a, b):
    if len(a) < 3 or np.std(a) < 1e-12 or np.std(b) < 1e-12:
        return 0.0
    return float(stats.pearsonr(a, b)[0])


def fit(train, val, config, *, seed=0, progress=None):
    """Train on `train = (c, r, r_hat, y)` arrays; early-stop on `val` (same shape).

    Early stopping watches the validation Pearson correlation (what the model is judged on;
    the MSE also moves with the shrinkage γ applies), keeps the best epoch's weights, and
    stops after `patience` epochs without improvement. `progress(epoch, train_loss,
    val_pearson)` is called after every epoch.
    """
    threads = torch.get_num_threads()
    # 50×50 matrices: thread hand-offs cost far more than the arithmetic (40× slower with two
    # threads on a busy 2-core machine), so fit on one thread and give the others back after.
    torch.set_num_threads(1)
    try:
        return _fit(train, val, config, seed=seed, progress=progress)
    finally:
        torch.set_num_threads(threads)


def _fit(train, val, config, *, seed, progress):
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    c, r, rh, y = (torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in train)
    vc, vr, vrh, vy = (torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in val)
    low, high = config.scale
    model = build(c.shape[1], config.variant, c, r, rh, low=low, high=high)
    optimiser = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    n = y.shape[0]
    best = (-2.0, 0, {k: v.clone() for k, v in model.state_dict().items()})
    curve = []
    for epoch in range(1, config.max_epochs + 1):
        model.train()
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for start in range(0, n, config.batch_size):
            batch = order[start : start + config.batch_size]
            prediction = model(c[batch], r[batch], rh[batch])
            mse = ((prediction - y[batch]) ** 2).mean()
            loss = mse + config.gamma * model.penalty()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += mse.item() * len(batch)
        model.eval()
        with torch.no_grad():
            val_pred = model(vc, vr, vrh).numpy()
        val_loss = float(np.mean((val_pred - vy.numpy()) ** 2)) if len(vy) else float("nan")
        val_pearson = _pearson(val_pred, vy.numpy())
        point = {"epoch": epoch, "train_loss": total / n, "val_loss": val_loss, "val_pearson": val_pearson}
        curve.append(point)
        if progress is not None:
            progress(epoch, point["train_loss"], val_pearson)
        if val_pearson > best[0] + 1e-6:
            best = (val_pearson, epoch, {k: v.clone() for k, v in model.state_dict().items()})
        elif epoch - best[1] >= config.patience:
            break
    model.load_state_dict(best[2])
    model.eval()
    return FitResult(model=model, curve=curve, best_epoch=best[1])


def predict(model, c, r, r_hat):
    with torch.no_grad():
        return model(
            torch.as_tensor(np.asarray(c, dtype=np.float32)),
            torch.as_tensor(np.asarray(r, dtype=np.float32)),
            torch.as_tensor(np.asarray(r_hat, dtype=np.float32)),
        ).numpy()
