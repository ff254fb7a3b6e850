"""The learning curve of a training run as SVG (matplotlib's object API: no pyplot state, no display)."""

import io
import math

from matplotlib.figure import Figure

LOSS_COLOUR = "#0b5394"
PEARSON_COLOUR = "#a1131b"


def learning_curve_figure(progress):
    """Training loss (left axis) and validation Pearson r (right axis) per epoch or step.

    The legend sits above the plot area, in a row of its own: inside it, at the upper right, it
    covered the right axis' labels.
    """
    points = [p for p in progress if "train_loss" in p]
    figure = Figure(figsize=(7, 3.2))
    axis = figure.subplots()
    fits = points and "stage" in points[0]  # a learned evaluator's run: each fold's fit, then the final one
    if fits:
        points = _gaps_between_fits(points)
    x = [p.get("epoch") if "step" not in p else p["step"] for p in points]
    lines = axis.plot(x, [p["train_loss"] for p in points], color=LOSS_COLOUR, label="training loss")
    label = "step" if points and "step" in points[0] else "epoch"
    axis.set_xlabel("epochs of each fit in turn (the folds, then the final fit)" if fits else label)
    axis.set_ylabel("training loss")
    if points and "val_pearson" in points[0]:
        other = axis.twinx()
        lines += other.plot(x, [p["val_pearson"] for p in points], color=PEARSON_COLOUR, label="validation Pearson")
        other.set_ylabel("validation Pearson r")
    if points:
        axis.legend(
            handles=lines, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(lines), frameon=False, fontsize=9
        )
    figure.tight_layout()
    return figure


def _gaps_between_fits(points):
    """The points with a gap (NaN) where one fit ends and the next begins: no line joins two models."""
    out = []
    for point in points:
        if out and (point["stage"], point.get("fold")) != (out[-1]["stage"], out[-1].get("fold")):
            out.append({**point, "step": point["step"] - 0.5, "train_loss": math.nan, "val_pearson": math.nan})
        out.append(point)
    return out


def learning_curve_svg(progress):
    buffer = io.StringIO()
    learning_curve_figure(progress).savefig(buffer, format="svg")
    return buffer.getvalue()
