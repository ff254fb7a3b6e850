"""Server-rendered report plots (matplotlib, Agg backend), cached on disk per report and inputs."""

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and workers; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
from django.conf import settings

JITTER_SD = 0.3  # human scores jittered with N(0, 0.3), as in Liu et al. (2016) Figure 1
HUMAN_SCALE = (1.0, 5.0)  # the rating scale: jittered points stay on it
SEED = 0
FORMATS = {"svg": "image/svg+xml", "png": "image/png"}
KINDS = ("metric", "human", "system")


def _figure():
    fig, ax = plt.subplots(figsize=(4.2, 3.6), dpi=110)
    ax.grid(alpha=0.3)
    return fig, ax


def jittered(values, rng):
    """Human scores plus N(0, JITTER_SD) noise, clipped to the rating scale (never 0.05 or 5.9)."""
    values = np.asarray(values, dtype=float)
    low = min(HUMAN_SCALE[0], np.nanmin(values)) if values.size else HUMAN_SCALE[0]
    high = max(HUMAN_SCALE[1], np.nanmax(values)) if values.size else HUMAN_SCALE[1]
    return np.clip(values + rng.normal(0, JITTER_SD, values.size), low, high)


def metric_scatter(human, values, metric):
    """A metric against the (jittered) mean human score of each response."""
    human = np.asarray(human, dtype=float)
    values = np.array([np.nan if v is None else v for v in values], dtype=float)
    keep = np.isfinite(human) & np.isfinite(values)
    x = jittered(human, np.random.default_rng(SEED))
    fig, ax = _figure()
    alpha = 0.6 if keep.sum() < 2000 else 0.15
    ax.scatter(x[keep], values[keep], s=6, alpha=alpha, color="#0b5394", linewidths=0)
    ax.set_xlabel("human score (jittered)")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} vs human", fontsize=10)
    return fig


def human_scatter(first_half, second_half):
    """Mean score of one random half of the annotators against the other half's."""
    rng = np.random.default_rng(SEED)
    fig, ax = _figure()
    ax.scatter(jittered(first_half, rng), jittered(second_half, rng), s=6, alpha=0.5)
    ax.set_xlabel("annotator half A (jittered)")
    ax.set_ylabel("annotator half B (jittered)")
    ax.set_title("human vs human", fontsize=10)
    return fig


def system_scatter(systems, metric):
    """Per-system mean human score against the metric's mean, with 95% CIs."""
    fig, ax = _figure()
    for row in systems:
        values = row["metrics"].get(metric) or {}
        x, y = row["human_mean"], values.get("mean")
        if x is None or y is None:
            continue
        xerr = [[x - (row["human_ci_low"] or x)], [(row["human_ci_high"] or x) - x]]
        yerr = [[y - (values.get("ci_low") or y)], [(values.get("ci_high") or y) - y]]
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o", capsize=3)
        ax.annotate(row["system"], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("system mean human score")
    ax.set_ylabel(f"system mean {metric}")
    ax.set_title(f"{metric}: system level", fontsize=10)
    return fig


def render(fig, fmt):
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    plt.close(fig)
    return buffer.getvalue()


def _cache_path(report, kind, metric, fmt):
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in (metric or "all"))
    folder = Path(settings.MEDIA_ROOT) / "analysis" / "plots" / str(report.pk)
    return folder / f"{report.fingerprint[:16]}-{kind}-{safe}.{fmt}"


def plot_bytes(report, kind, metric, fmt):
    """The plot's bytes, from the disk cache or drawn now (then cached). None if not drawable."""
    path = _cache_path(report, kind, metric, fmt)
    if path.exists():
        return path.read_bytes()
    figure = _draw(report, kind, metric)
    if figure is None:
        return None
    content = render(figure, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(content)
    temporary.replace(path)  # atomic: concurrent requests never read half a file
    return content


def _draw(report, kind, metric):
    data, vectors = report.data or {}, report.vectors or {}
    if kind == "metric" and metric in vectors.get("metrics", {}):
        return metric_scatter(vectors["human"], vectors["metrics"][metric], metric)
    if kind == "human" and vectors.get("halves"):
        return human_scatter(*vectors["halves"])
    if kind == "system" and metric in data.get("metrics", []):
        return system_scatter(data.get("systems", []), metric)
    return None
