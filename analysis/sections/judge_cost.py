"""What a judge costs beside what the crowd costs, and the precision each buys (issue 39).

- Judge: per 1,000 items at its prices (per million prompt and completion tokens) times the tokens
  its recorded usage on this report's dataset spent per prompt asked (its metric runs of the
  dataset, or its judging of the dataset's pairs; answers from the cache cost nothing and are not
  counted; its usage on other datasets is not this population's); a pairwise judge asks two prompts
  per pair (both orders).
- Crowd: per 1,000 answers at the study's observed pay: each survey's reward per task divided by
  the answers a submitted task of this report's population held, and the median seconds per
  answer (the hourly rate that pay comes to). Imported answers belong to no task: no pay observed.
- Precision (the planning code's variance decomposition, `analysis.stats.planning`): the mean of m
  ratings correlates with the responses' true (infinitely rated) score at sqrt(rel(m)); the judge,
  whose r with the human mean is attenuated by the humans' own noise, at about r / sqrt(rel(m now)).
  The crowd size whose mean is as precise is the judge's "worth in crowd ratings".
"""

import math
from statistics import median

from analysis.report.cells import number
from analysis.report.display import Column, DisplayTable
from analysis.report.population import kept_systems, population_clause
from analysis.sections import human_ceiling
from analysis.sections.base import Section
from analysis.stats.planning import reliability, variance_components
from annotation.kinds.pairwise.selectors import accepted_judgements
from annotation.models import Survey
from annotation.quality.selectors import accepted_ratings
from scoring.judges import prompts
from scoring.models import Judge, JudgeUsage
from scoring.services.judges.pairwise import pairs_label

JUDGE_PREFIX = "judge:"
ITEMS = 1000
CROWD_SIZES = (1, 2, 3, 5, 10)
JUDGE_COLUMNS = [
    "judge",
    "kind",
    "prompts_per_item",
    "prompt_tokens_per_prompt",
    "completion_tokens_per_prompt",
    "prompts_asked",
    "cost_per_1000",
    "r_with_human_mean",
    "precision",
    "crowd_equivalent",
    "why_no_cost",
]
CROWD_COLUMNS = [
    "survey",
    "kind",
    "reward_cents",
    "answers_per_task",
    "cost_per_1000",
    "median_seconds",
    "hourly",
    "n_answers",
]


def dataset_usage(judge, dataset, kind):
    """The judge's usage rows on `dataset`: its metric runs of it (rating) or its judging of its pairs."""
    if kind == "pairwise":
        return JudgeUsage.objects.filter(judge=judge, run=None, label=pairs_label(dataset))
    return JudgeUsage.objects.filter(judge=judge, run__dataset=dataset)


def judge_cost(judge, prompts_per_item, *, dataset, kind):
    """Tokens per prompt asked on `dataset` and the cost of 1,000 items, from the usage rows and prices."""
    usage = dataset_usage(judge, dataset, kind)
    asked = sum(max(row.prompts - row.cached, 0) for row in usage)
    prompt_tokens = sum(row.prompt_tokens for row in usage)
    completion_tokens = sum(row.completion_tokens for row in usage)
    row = {
        "prompts_per_item": prompts_per_item,
        "prompt_tokens_per_prompt": None,
        "completion_tokens_per_prompt": None,
        "cost_per_1000": None,
        "prompts_asked": asked,
        "why_no_cost": "",
    }
    if not asked:
        row["why_no_cost"] = "no recorded usage on this dataset (every answer came from the cache, or none was asked)"
        return row
    row["prompt_tokens_per_prompt"] = prompt_tokens / asked
    row["completion_tokens_per_prompt"] = completion_tokens / asked
    prompt_price, completion_price = judge.price_per_million_prompt_tokens, judge.price_per_million_completion_tokens
    if prompt_price is None and completion_price is None:
        row["why_no_cost"] = "the judge has no price"
        return row
    per_prompt = (
        row["prompt_tokens_per_prompt"] * float(prompt_price or 0)
        + row["completion_tokens_per_prompt"] * float(completion_price or 0)
    ) / 1_000_000
    row["cost_per_1000"] = per_prompt * prompts_per_item * ITEMS
    return row


def precision_of(r, s_b, s_w, m_now):
    """`(precision, crowd_equivalent)`: the judge's estimated correlation with the true score, and the
    ratings per response whose mean is as precise (None: no estimate; inf: more than any crowd)."""
    now = reliability(s_b, s_w, m_now)
    if r is None or now <= 0 or s_b <= 0:
        return None, None
    true_r = min(max(r, 0.0) / math.sqrt(now), 1.0)
    if true_r >= 1.0:
        return true_r, math.inf
    return true_r, s_w * true_r**2 / (s_b * (1 - true_r**2))


def crowd_costs(context):
    """Per survey of the report's population: reward per task, answers per submitted task, median seconds."""
    wanted = {int(pk) for pk in context.inputs.response_ids.tolist()}
    ratings = accepted_ratings(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    )
    answers = {}
    for survey_id, assignment_id, response_id, seconds in ratings.values_list(
        "survey_id", "assignment_id", "response_id", "seconds"
    ):
        if response_id in wanted:
            answers.setdefault(survey_id, []).append((assignment_id, seconds))
    judgements = accepted_judgements(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
    )
    kept = kept_systems(context.systems)
    if kept is not None:
        judgements = judgements.filter(response_a__system__name__in=kept, response_b__system__name__in=kept)
    for survey_id, assignment_id, seconds in judgements.values_list("survey_id", "assignment_id", "seconds"):
        answers.setdefault(survey_id, []).append((assignment_id, seconds))
    rows = []
    for survey in Survey.objects.filter(pk__in=answers).order_by("created_at", "pk"):
        mine = answers[survey.pk]
        tasks = {assignment for assignment, _ in mine if assignment is not None}
        in_tasks = sum(1 for assignment, _ in mine if assignment is not None)
        per_task = in_tasks / len(tasks) if tasks else None
        times = [seconds for _, seconds in mine if seconds is not None]
        cost = survey.reward_cents / 100 / per_task * ITEMS if per_task else None
        seconds = median(times) if times else None
        rows.append(
            {
                "survey": survey.name,
                "kind": survey.task_type,
                "reward_cents": survey.reward_cents,
                "answers_per_task": per_task,
                "cost_per_1000": cost,
                "median_seconds": seconds,
                "hourly": cost / ITEMS / seconds * 3600 if cost is not None and seconds else None,
                "n_answers": len(mine),
            }
        )
    return rows


def compute(context):
    inputs = context.inputs
    pearson = {row["metric"]: row["pearson"] for row in context.part("correlations")["utterance_level"]}
    rating_rows = human_ceiling.rating_rows(context) or []
    s_b, s_w, m_now = (
        variance_components([r[1] for r in rating_rows], [r[2] for r in rating_rows])
        if rating_rows
        else (0.0, 0.0, 0.0)
    )
    names = [(name, "rating") for name in inputs.metrics if name.startswith(JUDGE_PREFIX)]
    names += [(row["metric"], "pairwise") for row in context.part("alt_test")["alt_test"] if row["kind"] == "pairwise"]
    judges = {judge.name: judge for judge in Judge.objects.filter(owner_id=context.dataset.owner_id)}
    rows = []
    for name, kind in names:
        judge = judges.get(name[len(JUDGE_PREFIX) :])
        if judge is not None and kind == "rating" and prompts.get_template(judge.template).kind == prompts.PAIRWISE:
            continue
        cost = (
            judge_cost(judge, 2 if kind == "pairwise" else 1, dataset=context.dataset, kind=kind)
            if judge is not None
            else {"prompts_per_item": None, "cost_per_1000": None, "why_no_cost": "scores imported, not judged here"}
        )
        r = pearson.get(name) if kind == "rating" else None
        precision, equivalent = precision_of(r, s_b, s_w, m_now) if kind == "rating" else (None, None)
        rows.append(
            {
                "judge": name,
                "kind": kind,
                **cost,
                "r_with_human_mean": r,
                "precision": precision,
                "crowd_equivalent": None if equivalent is None or math.isinf(equivalent) else equivalent,
                "beyond_any_crowd": equivalent is not None and math.isinf(equivalent),
            }
        )
    crowd = crowd_costs(context)
    options = [
        {"ratings_per_response": m, "precision": math.sqrt(reliability(s_b, s_w, m)) if s_b > 0 else None}
        for m in CROWD_SIZES
    ]
    return {
        "judge_cost": {
            "judges": rows,
            "crowd": crowd,
            "crowd_precision": options,
            "ratings_per_response_now": m_now,
            "variance_between": s_b,
            "variance_within": s_w,
        }
    }


def _cost(value):
    return "–" if value is None else f"${value:,.2f}"


def _section(data):
    return data.get("judge_cost") or {}


def judge_table(data):
    rows = []
    for row in _section(data).get("judges", []):
        worth = "more than any crowd" if row.get("beyond_any_crowd") else number(row.get("crowd_equivalent"), 1)
        rows.append(
            [
                row["judge"],
                row["kind"],
                _cost(row.get("cost_per_1000"))
                if row.get("cost_per_1000") is not None
                else row.get("why_no_cost") or "–",
                number(row.get("r_with_human_mean")),
                number(row.get("precision")),
                worth,
            ]
        )
    return DisplayTable(
        name="judge_cost",
        title="Cost panel: the judge",
        download="judge cost",
        columns=[
            Column("Judge"),
            Column("Kind"),
            Column("Cost per 1,000 items"),
            Column("r with human mean", True),
            Column("Precision (r with true score)", True),
            Column("Worth in crowd ratings", True),
        ],
        rows=rows,
        note="Cost: the judge's prices times the tokens its recorded usage on this dataset spent per prompt (a "
        "pairwise judge asks two prompts per pair). Precision: its r with the human mean, corrected for the "
        "humans' own noise (reliability of the mean of the ratings each response has now); worth: the ratings "
        f"per response whose mean is as precise. On {population_clause(data)}.",
        empty="No LLM judge scored these answers.",
    )


def crowd_table(data):
    section = _section(data)
    rows = [
        [
            row["survey"],
            row["kind"],
            _cost(row["reward_cents"] / 100),
            number(row.get("answers_per_task"), 1),
            _cost(row.get("cost_per_1000")),
            number(row.get("median_seconds"), 1),
            _cost(row.get("hourly")),
            f"{row['n_answers']:,}",
        ]
        for row in section.get("crowd", [])
    ]
    sizes = ", ".join(
        f"{option['ratings_per_response']}: {number(option['precision'])}"
        for option in section.get("crowd_precision", [])
    )
    return DisplayTable(
        name="crowd_cost",
        title="Cost panel: the crowd",
        download="crowd cost",
        columns=[
            Column("Survey"),
            Column("Kind"),
            Column("Reward per task", True),
            Column("Answers per task", True),
            Column("Cost per 1,000 answers", True),
            Column("Median seconds per answer", True),
            Column("Hourly", True),
            Column("Answers", True),
        ],
        rows=rows,
        note="At the survey's reward and the answers a submitted task held (imported answers belong to no task: no "
        "pay observed). A response rated m times costs m answers; the precision of the mean of m ratings (its r with "
        f"the true score) by m: {sizes or '–'} (now {number(section.get('ratings_per_response_now'), 2)} a response).",
        empty="No answers in this report.",
    )


def present(data):
    return {"tables": [judge_table(data), crowd_table(data)]}


def nav(data, context):
    return [("t-judge_cost", "Cost: judge and crowd")]


def applies(data):
    return bool(_section(data).get("judges"))


def judge_export(data):
    return JUDGE_COLUMNS, [[row.get(column) for column in JUDGE_COLUMNS] for row in _section(data).get("judges", [])]


def crowd_export(data):
    return CROWD_COLUMNS, [[row.get(column) for column in CROWD_COLUMNS] for row in _section(data).get("crowd", [])]


SECTION = Section(
    name="judge_cost",
    keys=("judge_cost",),
    compute=compute,
    applies=applies,
    template="analysis/sections/tables.html",
    present=present,
    nav=nav,
    page_tables={"judge_cost": judge_table, "crowd_cost": crowd_table},
    tables={"judge_cost": judge_export, "crowd_cost": crowd_export},
)
