"""Precision planning (issue 20, point 6): how many more rated responses, at how many ratings each,
for a target width of the best metric's interval and to separate the top two metrics (the
statistics are in `analysis/stats/planning.py`). It is also the planning panel of the survey page,
registered in annotation's extensions: annotation must not import analysis, so the survey page asks
`annotation.services.extensions.survey_panels` and `planning_panel` answers from the survey's cached report
(never computing on a page view), with one button per option that adds ratings per response; the
button posts to annotation's own `survey_extend` endpoint, which owns the write and the provider call.
"""

import math

import numpy as np
from django.template.loader import render_to_string
from django.urls import reverse

from analysis.models import Report
from analysis.report.cells import count, number, p_value
from analysis.report.display import Column, DisplayTable
from analysis.report.report_keys import params_hash, report_params
from analysis.sections import human_ceiling
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings
from analysis.sections.learned import trained_here
from analysis.stats.planning import plan, variance_components, williams_p_now
from annotation.crowd.registry import assignment_ceiling, can_add_assignments
from annotation.kinds.registry import kind_for
from annotation.models import Response
from annotation.selectors import may_change_study
from annotation.services.extend import MAX_EXTRA_PER_HIT

TARGET_WIDTH = 0.1  # default target: a 95% CI on r no wider than 0.1 (e.g. 0.45-0.55)
EXPORT_COLUMNS = [
    "metric",
    "r",
    "target_width",
    "ratings_per_response",
    "reliability",
    "expected_r",
    "responses_for_width",
    "more_responses_for_width",
    "responses_to_separate",
    "more_responses_to_separate",
]


def compute(context):
    return {
        "planning": planning_section(
            human_ceiling.rating_rows(context),
            context.part("correlations")["utterance_level"],
            context.part("williams")["williams"],
            n_available=_n_available(context.dataset, context.survey, context.systems),
            trained_here=trained_here(context),
        )
    }


def _n_available(dataset, survey, systems):
    """Responses the study could still have rated: the dataset's (the survey's systems, the filter's)."""
    responses = Response.objects.filter(context__dataset=dataset)
    if survey is not None and survey.systems.exists():
        responses = responses.filter(system__in=survey.systems.all())
    if systems:
        responses = responses.filter(system__name__in=list(systems))
    return responses.count()


def _ratings_options(m_now):
    current = max(1, math.ceil(m_now - 1e-9))
    return sorted({round(m_now, 2), current + 1, current + 2, 2 * current})


def _top_two(utterance_rows, williams):
    ranked = sorted(utterance_rows, key=lambda row: -row["pearson"])
    if len(ranked) < 2:
        return None
    a, b = ranked[0]["metric"], ranked[1]["metric"]
    pair = next((row for row in williams if {row["a"], row["b"]} == {a, b}), None)
    if pair is None:
        return None
    return {
        "a": pair["a"],
        "b": pair["b"],
        "r_a": pair["r_a"],
        "r_b": pair["r_b"],
        "r_ab": pair["r_ab"],
        "n": pair["n"],
        "p_now": williams_p_now(pair["r_a"], pair["r_b"], pair["r_ab"], pair["n"]),
    }


def planning_section(rating_rows, utterance_rows, williams, *, n_available, target_width=TARGET_WIDTH, trained_here=()):
    """How many rated responses, at how many ratings each, for the target width on the best
    metric's r and to separate the top two metrics. rating_rows: (annotator, response, score).

    `trained_here`: metrics trained on these very ratings (ADEM models of this dataset). Their r
    here is optimistic, so planning uses the best metric not among them (browser walk F20); only
    when every metric is one of them does it plan on one, with `trained_here_caveat` set.
    """
    rows = [row for row in utterance_rows if row.get("pearson") is not None]
    if not rows or not rating_rows:
        return {"metric": None, "reason": "Needs accepted ratings and at least one metric with a correlation."}
    trained_here = set(trained_here)
    fair = [row for row in rows if row["metric"] not in trained_here]
    left_out = sorted({row["metric"] for row in rows} & trained_here) if fair else []
    rows = fair or rows
    best = max(rows, key=lambda row: row["pearson"])
    responses = np.array([row[1] for row in rating_rows])
    scores = np.array([row[2] for row in rating_rows], dtype=float)
    s_b, s_w, m_now = variance_components(responses, scores)
    low, high = best.get("pearson_ci_low"), best.get("pearson_ci_high")
    width = (high - low) if low is not None and high is not None else None
    top_two = _top_two(rows, williams)
    result = plan(
        r=best["pearson"],
        ci_width=width,
        n=best["n"],
        s_b=s_b,
        s_w=s_w,
        m_now=m_now,
        target_width=target_width,
        ratings_options=_ratings_options(m_now),
        top_two=None if top_two is None else (top_two["r_a"], top_two["r_b"], top_two["r_ab"]),
    )
    for option in result["options"]:
        for key in ("responses_for_width", "responses_to_separate"):
            needed = option[key]
            option[f"more_{key}"] = None if needed is None else max(0, needed - best["n"])
    return {
        "metric": best["metric"],
        "r": best["pearson"],
        "ci_width": width,
        "target_width": target_width,
        "n_responses": best["n"],
        "n_available": n_available,
        "ratings_per_response": m_now,
        "variance_between": s_b,
        "variance_within": s_w,
        "top_two": top_two,
        # left out because trained on these ratings; or, when nothing else is left, the caveat
        "trained_here_left_out": left_out,
        "trained_here_caveat": best["metric"] in trained_here,
        **result,
    }


def planning_table(data):
    planning = data.get("planning") or {}
    top = planning.get("top_two") or {}
    rows = [
        [
            number(option["ratings_per_response"], 2),
            number(option["reliability"]),
            number(option["expected_r"]),
            count(option["responses_for_width"]),
            count(option["more_responses_for_width"]),
            count(option["responses_to_separate"]),
            count(option["more_responses_to_separate"]),
        ]
        for option in planning.get("options", [])
    ]
    separate = f"{top.get('a')} from {top.get('b')}" if top else "the top two metrics"
    return DisplayTable(
        name="planning",
        title="Planning: how many more rated responses?",
        download="planning",
        columns=[
            Column("Ratings per response", True),
            Column("Reliability", True),
            Column("Expected r", True),
            Column(f"Responses for CI width {planning.get('target_width', 0.1):g}", True),
            Column("More", True),
            Column(f"Responses to separate {separate}", True),
            Column("More", True),
        ],
        rows=rows if planning.get("metric") else [],
        note=planning_note(planning),
        empty=planning.get("reason") or "Needs accepted ratings and metric scores.",
    )


def _trained_here_planning(planning):
    """Why planning is not on the report's top metric, or the caveat when it had to be (F20)."""
    if planning.get("trained_here_caveat"):
        return (
            f"Caution: {planning['metric']} was trained on these ratings, so its r here is optimistic and the "
            "numbers below too few; no metric not trained on them has a correlation. "
        )
    left_out = planning.get("trained_here_left_out") or []
    if left_out:
        return (
            f"Planned on {planning['metric']}, the best metric not trained on these ratings ({', '.join(left_out)} "
            f"{'was' if len(left_out) == 1 else 'were'} trained on them: {'its' if len(left_out) == 1 else 'their'} "
            "r here is optimistic). "
        )
    return ""


def planning_note(planning):
    if not planning.get("metric"):
        return ""
    top = planning.get("top_two") or {}
    shown = p_value(top.get("p_now"))
    p_now = f"; now Williams' p {shown if shown.startswith('<') else '= ' + shown}" if top else ""
    return (
        _trained_here_planning(planning)
        + f"For {planning['metric']} (r = {number(planning['r'])}, 95% CI width {number(planning.get('ci_width'))} "
        f"over {planning['n_responses']:,} responses, {number(planning['ratings_per_response'], 2)} ratings each; "
        f"the dataset has {planning.get('n_available', 0):,} responses{p_now}). Reliability of a response's mean "
        "from the variance between and within responses; more ratings raise the expected r (less attenuation). "
        "Widths from Fisher's z, scaled by this study's bootstrap-to-Fisher ratio "
        f"({number(planning.get('design_effect'), 2)}); separation from Williams' test at p < 0.05."
    )


def planning_export(data):
    planning = data.get("planning") or {}
    rows = [
        [planning.get("metric"), planning.get("r"), planning.get("target_width"),
         *[option.get(key) for key in EXPORT_COLUMNS[3:]]]
        for option in planning.get("options", [])
    ]  # fmt: skip
    return EXPORT_COLUMNS, rows


# --- the survey page's panel ------------------------------------------------------------------


def _extend_options(planning, survey):
    """(ratings to add per response, resulting per HIT, the option's row) for each option above now."""
    m_now = planning.get("ratings_per_response") or 0
    # MTurk cannot take a HIT from fewer than 10 assignments to 10 or more: such buttons would only be refused.
    ceiling = assignment_ceiling(survey)
    options = []
    for option in planning.get("options", []):
        extra = math.ceil(option["ratings_per_response"] - m_now - 1e-9)
        if ceiling is not None and survey.assignments_per_hit < ceiling <= survey.assignments_per_hit + extra:
            continue
        # More than the extension accepts in one go would be a button that is always refused.
        if 1 <= extra <= MAX_EXTRA_PER_HIT:
            options.append({"per_hit": extra, "after": survey.assignments_per_hit + extra, "option": option})
    return options


def planning_panel(request, survey):
    if not kind_for(survey).rates_responses:
        return ""  # planning sizes 1-5 ratings per response; a pairwise or writing survey has none
    report = (
        Report.objects.defer("vectors")
        .filter(dataset_id=survey.dataset_id, survey=survey, params_hash=params_hash(report_params()))
        .first()
    )
    data = report.data if report is not None else None
    planning = (data or {}).get("planning") or {}
    context = {
        "survey": survey,
        "report_url": reverse("analysis:survey_report", args=[survey.pk]),
        "planning": planning,
        "table": planning_table(data) if data else None,
        "computed_at": report.computed_at if report is not None else None,
        "may_change": may_change_study(user=request.user, study=survey),
        "can_extend": can_add_assignments(survey),
        "extend_options": _extend_options(planning, survey) if planning.get("metric") else [],
        "assignment_ceiling": assignment_ceiling(survey),
        "extend_url": reverse("annotation:survey_extend", args=[survey.pk]),
    }
    return render_to_string("analysis/sections/planning_panel.html", context, request=request)  # request: CSRF token


SECTION = Section(
    name="planning",
    keys=("planning",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(planning_table),
    nav=tables_nav,
    page_tables={"planning": planning_table},
    tables={"planning": planning_export},
)
