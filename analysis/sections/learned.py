"""The learned metrics (ADEM's `adem:`, the learned evaluators' `learned:`) among a report's metrics
that were trained on the report's own ratings.

Such a model is scored here on every response, most of which it was trained (or early-stopped)
on, so its correlations in this report are optimistic and its place in the ranking flattered.
The report says so next to its tables and gives the model's held-out test figure, the fair one.
"""

from analysis.report.cells import number
from analysis.report.latex import latex_escape
from analysis.sections.base import Section
from scoring.models import AdemModel
from scoring.models.adem import ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX

MODEL_PREFIXES = (ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX)


def compute(context):
    rows = trained_here_section(dataset=context.dataset, metrics=list(context.inputs.metrics))
    return {"trained_on_these_ratings": rows}


def trained_here_section(*, dataset, metrics):
    """`[{"metric", "kind", "train", "validation", "fitted_on_validation", "folds", "test_pearson",
    "test_spearman", "test_n"}]`, one
    per ADEM or learned-evaluator metric of the report whose model (the dataset owner's, by name) was
    trained on this dataset; [] when none."""
    wanted = [metric for metric in metrics if metric.startswith(MODEL_PREFIXES)]
    names = [metric.split(":", 1)[1] for metric in wanted]
    if not names:
        return []
    models = AdemModel.objects.filter(owner_id=dataset.owner_id, dataset=dataset, name__in=names).order_by("name")
    rows = []
    for model in models:
        if model.metric_name not in wanted:  # adem:x named, but x is now a learned evaluator (or the reverse)
            continue
        results = model.results or {}
        split, test = results.get("split") or {}, results.get("test") or {}
        rows.append(
            {
                "metric": model.metric_name,
                "kind": model.kind,
                "train": split.get("train"),
                "validation": split.get("validation"),
                "fitted_on_validation": bool(split.get("fitted_on_validation")),
                "folds": split.get("folds"),
                "test_pearson": test.get("pearson"),
                "test_spearman": test.get("spearman"),
                "test_n": test.get("n"),
            }
        )
    return rows


def trained_here_note(data):
    """One sentence per such model, for the notes under the ranking and correlation tables."""
    sentences = []
    for row in data.get("trained_on_these_ratings") or []:
        held_out = f"{row['folds']}-fold cross-validated" if row.get("folds") else "held-out test"
        learned = row.get("kind") not in (None, AdemModel.Kind.ADEM)
        # a learned evaluator's figure is ranked by Spearman in issue 41's targets: said beside Pearson's
        spearman = (
            f", Spearman rho {number(row['test_spearman'])}" if learned and row.get("test_spearman") is not None else ""
        )
        test = (
            f"; its {held_out} figure, the fair one, is Pearson r {number(row['test_pearson'])}{spearman} "
            f"(n = {row['test_n']})"
            if row.get("test_pearson") is not None
            else ""
        )
        if learned:
            # the pooled out-of-fold predictions: every response scored by a model that never saw its context
            test = test.replace(f"its {held_out} figure", f"its {held_out} out-of-fold figure")
        # the stacked kind's inner-cv rule fits its validation rows as well: "learnt from" covers both
        fitted = ", both fitted on" if row.get("fitted_on_validation") else ""
        sentences.append(
            f"{row['metric']} was trained on these ratings ({row['train']} responses in training, "
            f"{row['validation']} in validation{fitted}): its figures here "
            f"include responses it learnt from, so they are optimistic{test}."
        )
    return " ".join(sentences)


def trained_here_latex(data):
    """A footnote saying which ADEM metrics were trained on these very ratings (optimistic figures)."""
    note = trained_here_note(data)
    return rf"\par\smallskip{{\footnotesize {latex_escape(note)}}}" if note else ""


def trained_here(context):
    """The metrics of this report trained on its ratings (other sections' caveats)."""
    return [row["metric"] for row in context.part("learned")["trained_on_these_ratings"]]


SECTION = Section(name="learned", keys=("trained_on_these_ratings",), compute=compute)
