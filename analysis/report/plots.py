"""Server-rendered report plots (matplotlib, Agg backend), cached on disk per report and inputs."""

import importlib
import io
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.services.runtime.files import write_atomically
from annotation.services.text.reserved import system_label

JITTER_SD = 0.3  # human scores jittered with N(0, 0.3), as in Liu et al. (2016) Figure 1
HUMAN_SCALE = (1.0, 5.0)  # the rating scale: jittered points stay on it
SEED = 0
FORMATS = {"svg": "image/svg+xml", "png": "image/png"}
KINDS = ("metric", "human", "system", "pairwise", "sensitivity")
# Plots of the whole report, not of one metric.
WHOLE_REPORT = ("human", "pairwise", "sensitivity")


@cache
def _pyplot():
    """pyplot at the first plot, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up")."""
    importlib.import_module("matplotlib").use("Agg")  # no display on servers and workers; must precede pyplot
    return importlib.import_module("matplotlib.pyplot")


def _literal(text):
    """Dataset text (a system's or metric's name) as matplotlib shows it: a `$` would start
    mathtext, and a name like `$\\x$` then fails the whole plot (a 500) instead of printing."""
    return str(text).replace("$", r"\$")


def _figure():
    fig, ax = _pyplot().subplots(figsize=(4.2, 3.6), dpi=110)
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
    ax.set_ylabel(_literal(metric))
    ax.set_title(_literal(f"{metric} vs human"), fontsize=10)
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
        ax.annotate(_literal(row["system"]), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("system mean human score")
    ax.set_ylabel(_literal(f"system mean {metric}"))
    ax.set_title(_literal(f"{metric}: system level"), fontsize=10)
    return fig


def pairwise_ranking(systems):
    """Bradley-Terry strength per system (best on top) with its bootstrap interval."""
    fig, ax = _figure()
    rows = list(reversed(systems))
    for y, row in enumerate(rows):
        low = row["ci_low"] if row["ci_low"] is not None else row["strength"]
        high = row["ci_high"] if row["ci_high"] is not None else row["strength"]
        ax.errorbar(row["strength"], y, xerr=[[row["strength"] - low], [high - row["strength"]]], fmt="o", capsize=3)
    ax.set_yticks(range(len(rows)), [_literal(system_label(row["system"])) for row in rows], fontsize=8)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("Bradley-Terry log-strength (mean 0), 95% CI")
    ax.set_title("Pairwise ranking", fontsize=10)
    return fig


def sensitivity_plot(section):
    """Each metric's Pearson r (95% CI) under each rater filter, one panel per rule varied."""
    settings = section.get("settings", [])
    factors = [f for f in ("kappa_threshold", "attention_policy", "min_seconds_per_item") if any(
        s["factor"] == f for s in settings)]  # fmt: skip
    # A last, empty panel holds the legend, so tight_layout keeps it clear of the plots.
    metrics = list(dict.fromkeys(row["metric"] for row in section.get("rows", [])))
    columns = 1 if len(metrics) <= 14 else 2  # a legend of 29 metrics in one column outgrows the panels
    fig, axes = _pyplot().subplots(
        1, len(factors) + 1, figsize=(9.0 + 1.6 * columns, 4.2), dpi=110, squeeze=False,
        gridspec_kw={"width_ratios": [3] * len(factors) + [1.5 * columns]},
    )  # fmt: skip
    titles = {
        "kappa_threshold": "κ threshold",
        "attention_policy": "attention checks",
        "min_seconds_per_item": "min s/item",
    }
    colours = _pyplot().get_cmap("tab20")
    for ax, factor in zip(axes[0][:-1], factors, strict=True):
        keys = [s["setting"] for s in settings if s["factor"] == factor]
        labels = ["off" if s["value"] is None else f"{s['value']:g}" if isinstance(s["value"], float) else s["value"]
                  for s in settings if s["factor"] == factor]  # fmt: skip
        for i, metric in enumerate(metrics):
            rows = {row["setting"]: row for row in section["rows"] if row["metric"] == metric}
            y = np.array([np.nan if rows[k]["pearson"] is None else rows[k]["pearson"] for k in keys], dtype=float)
            low = np.array([np.nan if rows[k]["pearson_ci_low"] is None else rows[k]["pearson_ci_low"] for k in keys])
            high = np.array(
                [np.nan if rows[k]["pearson_ci_high"] is None else rows[k]["pearson_ci_high"] for k in keys]
            )
            # Metrics side by side around each setting (0.4 of the gap in all), so intervals do not hide each other.
            x = np.arange(len(keys)) + (i - (len(metrics) - 1) / 2) * 0.4 / max(len(metrics), 1)
            marker = "os^D"[i // 20 % 4]  # tab20 has 20 colours: the next 20 metrics get another marker
            ax.errorbar(x, y, yerr=[y - low, high - y], fmt=f"{marker}-", ms=3, lw=1, capsize=2, color=colours(i % 20),
                        label=_literal(metric) if ax is axes[0][0] else None)  # fmt: skip
        ax.set_xticks(range(len(keys)), labels, fontsize=8)
        ax.set_title(titles[factor], fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("Pearson r with humans")
    panels = axes[0][:-1]
    if factors:  # one y scale for all panels, so their shifts compare at a glance
        limits = [ax.get_ylim() for ax in panels]
        for ax in panels:
            ax.set_ylim(min(low for low, _ in limits), max(high for _, high in limits))
    legend = axes[0][-1]
    legend.axis("off")
    if metrics:
        handles, labels = axes[0][0].get_legend_handles_labels()
        legend.legend(handles, labels, loc="center left", fontsize=7, frameon=False, ncols=columns)
    return fig


def render(fig, fmt):
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    _pyplot().close(fig)
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
    write_atomically(path, content)  # two requests may draw the same plot at once
    return content


def _draw(report, kind, metric):
    data, vectors = report.data or {}, report.vectors or {}
    if kind == "metric" and metric in vectors.get("metrics", {}):
        return metric_scatter(vectors["human"], vectors["metrics"][metric], metric)
    if kind == "human" and vectors.get("halves"):
        return human_scatter(*vectors["halves"])
    if kind == "pairwise" and (data.get("pairwise") or {}).get("systems"):
        return pairwise_ranking(data["pairwise"]["systems"])
    if kind == "sensitivity" and data.get("sensitivity"):
        return sensitivity_plot(data["sensitivity"])
    if kind == "system" and metric in data.get("metrics", []):
        return system_scatter(data.get("systems", []), metric)
    return None
