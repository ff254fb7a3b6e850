"""The human ceiling: split-half agreement between random halves of the annotators over exactly the
ratings the report uses (quality control's figure, filtered as the report), with Cohen's kappa and
Krippendorff's alpha of the same ratings (`population_agreement`). Its split-half rows and first
split are shared: planning reads the rows, the human-vs-human plot the halves."""

from analysis.report.population import counted, population_agreement
from analysis.sections.base import Section, with_ratings
from annotation.quality.agreement import split_half_agreement, split_halves
from annotation.quality.selectors import accepted_ratings


def _split_half(context):
    """Quality control's split-half agreement over exactly the ratings this report uses.

    Returns the summary and the first split's two mean vectors (for the human-vs-human scatter).
    """
    ratings = accepted_ratings(
        dataset=context.dataset, surveys=context.surveys, aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    )  # fmt: skip
    wanted = set(context.inputs.response_ids.tolist())
    rows = [row for row in ratings.values_list("annotator_id", "response_id", "score") if row[1] in wanted]
    summary = split_half_agreement(rows, seed=context.seed)
    first = next(split_halves(rows, n_splits=1, seed=context.seed, mode=summary["mode"]), None)
    return summary, first, rows


def split_half(context):
    """`(summary, first split's two mean vectors or None, the (annotator, response, score) rows)`."""
    return context.memo("split_half", lambda: _split_half(context))


def rating_rows(context):
    return split_half(context)[2]


def halves(context):
    return split_half(context)[1]


def _ceiling(split):
    """The human split-half row, flattened for the tables (quality control's figure, filtered as the report)."""
    return {
        "pearson": split["pearson"]["mean"],
        "pearson_sd": split["pearson"]["std"],
        "spearman": split["spearman"]["mean"],
        "spearman_sd": split["spearman"]["std"],
        "n_splits": split["n_splits"],
        "n_items_mean": split["n_responses"],
        "mode": split["mode"],
    }


def compute(context):
    return {
        "human_ceiling": _ceiling(split_half(context)[0]),
        "population_agreement": population_agreement(
            dataset=context.dataset,
            surveys=context.surveys,
            aspect=context.aspect,
            apply_exclusions=context.apply_exclusions,
            response_ids=context.inputs.response_ids.tolist(),
        ),
    }


def agreement_text(data):
    """The human-ceiling line's agreement figures, with the population they are computed on."""
    figures = data.get("population_agreement")
    if not figures:
        return ""
    n = f"{figures.get('n_ratings', 0):,}"
    if figures.get("population") == "accepted":
        who = f"the {n} accepted ratings"
    else:
        who = f"all {n} ratings (exclusions ignored)"
    kappa = "–" if figures.get("median_kappa") is None else f"{figures['median_kappa']:.3f}"
    alpha = "–" if figures.get("alpha") is None else f"{figures['alpha']:.3f}"
    return (
        f"median Cohen's κ {kappa} (over {counted(figures.get('n_pairs'), 'annotator pair')}), "
        f"Krippendorff's α {alpha}, both on {who} of "
        f"{counted(figures.get('n_annotators'), 'annotator')} that this report uses"
    )


def present(data):
    return {"agreement_text": agreement_text(data)}


def nav(data, context):
    return [("t-ceiling", "Human ceiling")]


SECTION = Section(
    name="human_ceiling",
    keys=("human_ceiling", "population_agreement"),
    compute=compute,
    applies=with_ratings,
    template="analysis/sections/human_ceiling.html",
    present=present,
    nav=nav,
)
