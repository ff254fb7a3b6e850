"""The report on USR-PersonaChat: its correlations equal scipy's on the same vectors; exports parse."""

import csv
import io
import json
import re
from collections import defaultdict

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy import stats as scipy_stats

from analysis.models import Report
from analysis.report.latex import latex_escape, latex_escape_tt
from analysis.report.report_keys import report_params
from analysis.sections.agreement import _jsonable
from analysis.sections.sensitivity import settings_grid
from analysis.services.build import report_build, report_check, report_fingerprint, report_get_or_create, report_refresh
from analysis.services.exports import TABLES, table, to_csv, to_latex
from annotation.models import HIT, Assignment, Rating, Response
from scoring.models import MetricScore

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


def run_report(**options):
    out = io.StringIO()
    call_command("report", stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def expected_vectors(dataset, ratings, values):
    """Human means computed straight from the rating records, aligned with metric values."""
    ids = {
        (context_id, system): pk
        for pk, context_id, system in Response.objects.filter(context__dataset=dataset).values_list(
            "pk", "context__external_id", "system__name"
        )
    }
    scores = defaultdict(list)
    for record in ratings:
        scores[ids[(record["context_id"], record["system"])]].append(record["score"])
    order = sorted(scores)
    human = np.array([np.mean(scores[pk]) for pk in order])
    return order, human, {name: np.array([values[pk][name] for pk in order]) for name in values[order[0]]}


def test_report_json_correlations_equal_scipy_on_the_same_vectors(usr_study):
    dataset, _, ratings, values = usr_study
    data = json.loads(run_report(dataset=dataset.name, format="json", bootstrap=200))
    order, human, metrics = expected_vectors(dataset, ratings, values)
    assert data["n_responses"] == len(order) == 300
    assert data["n_ratings"] == len(ratings) == 900
    rows = {row["metric"]: row for row in data["utterance_level"]}
    assert set(rows) == {"length", "overlap_f1", "overlap_f1_nostop"}
    for name, vector in metrics.items():
        pearson = scipy_stats.pearsonr(human, vector)
        spearman = scipy_stats.spearmanr(human, vector)
        assert rows[name]["pearson"] == pytest.approx(pearson.statistic, abs=1e-12)
        assert rows[name]["pearson_p"] == pytest.approx(pearson.pvalue, rel=1e-9)
        assert rows[name]["spearman"] == pytest.approx(spearman.statistic, abs=1e-12)
        assert rows[name]["spearman_p"] == pytest.approx(spearman.pvalue, rel=1e-9)
        assert rows[name]["n"] == 300
        assert rows[name]["pearson_ci_low"] < rows[name]["pearson"] < rows[name]["pearson_ci_high"]


def test_report_system_level_correlates_system_means(usr_study):
    dataset, _, ratings, values = usr_study
    data = report_build(dataset=dataset, n_boot=100)
    order, human, metrics = expected_vectors(dataset, ratings, values)
    systems = dict(Response.objects.filter(pk__in=order).values_list("pk", "system__name"))
    labels = sorted(set(systems.values()))
    assert [s["system"] for s in data["systems"]] == labels
    system_of = np.array([systems[pk] for pk in order])
    human_means = [human[system_of == label].mean() for label in labels]
    length_means = [metrics["length"][system_of == label].mean() for label in labels]
    row = next(r for r in data["system_level"] if r["metric"] == "length")
    assert row["n"] == 5
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(human_means, length_means).statistic)
    assert data["systems"][0]["human_mean"] == pytest.approx(human_means[0])


def test_report_has_every_section_and_says_which_ratings_it_used(usr_study):
    dataset, survey, _, _ = usr_study
    data = report_build(dataset=dataset, n_boot=50)
    for key in (
        "n_responses", "n_ratings", "utterance_level", "human_ceiling", "system_level", "systems", "williams",
        "agreement", "length_bias", "stopwords", "failure_analysis", "filters",
    ):  # fmt: skip
        assert key in data
    assert data["filters"]["surveys"] == [survey.name]
    assert data["filters"]["apply_exclusions"] is True
    assert data["filters"]["aspect"] == "overall"
    assert data["stopwords"][0]["metric"] == "overlap_f1"
    assert data["stopwords"][0]["variant"] == "overlap_f1_nostop"
    assert len(data["williams"]) == 3
    assert {row["measure"] for row in data["length_bias"]["rows"]} == {
        "human",
        "length",
        "overlap_f1",
        "overlap_f1_nostop",
    }
    assert data["human_ceiling"]["pearson"] > 0.5  # three annotators agree far better than the metrics
    json.dumps(data)  # serialisable as is


def test_report_system_filter_keeps_only_the_chosen_systems(usr_study):
    dataset, _, _, _ = usr_study
    out = run_report(dataset=dataset.name, format="json", systems="Seq2Seq,KV-MemNN", bootstrap=0)
    data = json.loads(out)
    assert data["n_responses"] == 120
    assert data["filters"]["systems"] == ["KV-MemNN", "Seq2Seq"]


def test_report_command_rejects_an_unknown_dataset(db):
    with pytest.raises(CommandError, match=r"[Nn]o dataset named"):
        run_report(dataset="nope")


def test_report_csv_parses_every_table(usr_study):
    dataset, _, _, _ = usr_study
    text = run_report(dataset=dataset.name, format="csv", bootstrap=50)
    sections = [s for s in text.split("\n\n") if s.strip()]
    assert [s.splitlines()[0] for s in sections] == [f"# {name}" for name in TABLES]
    utterance = list(csv.DictReader(io.StringIO(sections[0].split("\n", 1)[1])))
    assert {row["metric"] for row in utterance} == {"length", "overlap_f1", "overlap_f1_nostop"}
    assert all(float(row["n"]) == 300 for row in utterance)
    one = list(csv.reader(io.StringIO(run_report(dataset=dataset.name, format="csv", table="systems", bootstrap=0))))
    assert one[0][:3] == ["system", "n", "human_mean"] and len(one) == 6
    assert all(len(row) == len(one[0]) for row in one)


def parse_latex_tables(text):
    """Check a LaTeX document's table structure without TeX; returns the rows of each tabular."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("%"))
    unescaped = re.sub(r"\\[{}]", "", body)
    assert unescaped.count("{") == unescaped.count("}"), "unbalanced braces"
    environments = []
    for match in re.finditer(r"\\(begin|end)\{(\w+)\}", body):
        if match.group(1) == "begin":
            environments.append(match.group(2))
        else:
            assert environments and environments.pop() == match.group(2), "mismatched environment"
    assert not environments, "unclosed environment"
    tables = []
    for spec, inner in re.findall(r"\\begin\{tabular\}\{([^}]*)\}(.*?)\\end\{tabular\}", body, flags=re.S):
        n_columns = len(re.findall(r"[lcrp]", spec))
        rows = []
        for raw in inner.strip().splitlines():
            line = raw.strip()
            if line in (r"\toprule", r"\midrule", r"\bottomrule"):
                continue
            assert line.endswith(r"\\"), f"row without \\\\ ending: {line}"
            cells = re.split(r"(?<!\\)&", line[:-2])
            assert len(cells) == n_columns, f"{len(cells)} cells for {n_columns} columns: {line}"
            rows.append([cell.strip() for cell in cells])
        tables.append(rows)
    return body, tables


def test_report_latex_is_a_well_formed_booktabs_table(usr_study):
    dataset, _, _, _ = usr_study
    text = run_report(dataset=dataset.name, format="latex", bootstrap=0)
    body, tables = parse_latex_tables(text)
    # utterance level, system level, filter sensitivity (one row per setting under its header)
    assert body.count(r"\begin{table}") == 3 == len(tables)
    assert len(tables[2]) == 1 + len(settings_grid()) and tables[2][1][0] == "the study's settings"
    assert r"\toprule" in body and r"\bottomrule" in body
    metrics = [row[0] for row in tables[0][1:]]
    assert metrics[:3] == ["length", r"overlap\_f1", r"overlap\_f1\_nostop"]
    assert metrics[3].startswith(r"\textit{Human")
    assert "usr\\_personachat" in body


def test_latex_escape_handles_every_special_character():
    assert latex_escape("adem:a_b & 50% #1 {x} ~ ^ $ \\") == (
        r"adem:a\_b \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{}"
    )


def test_latex_escape_spells_out_what_the_default_fonts_print_as_other_glyphs():
    # OT1 prints "<", ">" and "|" as "¡", "¿" and an em dash: a system called "<b>bold</b>".
    assert latex_escape("<b>x</b> | y") == r"\textless{}b\textgreater{}x\textless{}/b\textgreater{} \textbar{} y"


def test_latex_escape_for_typewriter_text_keeps_the_characters_its_font_prints_as_they_are():
    assert latex_escape_tt("bleu2|<x> & y_z\n") == r"bleu2|<x> \& y\_z "


def test_latex_escape_turns_line_breaks_and_control_characters_into_spaces():
    # Two line breaks inside a caption end its paragraph: LaTeX stops with "Runaway argument".
    assert latex_escape("a\n\nb\r\tc\x0bd\x7f") == "a  b  c d "


def test_csv_of_an_empty_report_still_has_headers():
    text = to_csv({"utterance_level": []}, "utterance_level")
    assert text.splitlines() == [",".join(table({}, "utterance_level")[0])]


def reject_annotator(survey, annotator):
    hit = HIT.objects.create(survey=survey, position=0)
    assignment = Assignment.objects.create(hit=hit, slot=0, annotator=annotator, status=Assignment.Status.REJECTED)
    return Rating.objects.filter(survey=survey, annotator=annotator).update(assignment=assignment)


def test_exclusions_change_the_report_and_no_exclusions_restores_every_rating(usr_study):
    dataset, survey, _, _ = usr_study
    annotator = Rating.objects.filter(survey=survey).first().annotator
    n_excluded = reject_annotator(survey, annotator)
    assert n_excluded > 0
    excluded = json.loads(run_report(dataset=dataset.name, format="json", bootstrap=0))
    everything = json.loads(run_report(dataset=dataset.name, format="json", bootstrap=0, no_exclusions=True))
    assert excluded["n_ratings"] == 900 - n_excluded
    assert everything["n_ratings"] == 900
    assert excluded["filters"]["n_ratings_before_exclusions"] == 900
    assert everything["filters"]["apply_exclusions"] is False
    assert excluded["utterance_level"][0]["pearson"] != everything["utterance_level"][0]["pearson"]


def test_fingerprint_changes_with_exclusions_and_metric_scores_but_not_otherwise(usr_study):
    dataset, survey, _, _ = usr_study
    first = report_fingerprint(dataset=dataset)
    assert report_fingerprint(dataset=dataset) == first
    reject_annotator(survey, Rating.objects.filter(survey=survey).first().annotator)
    second = report_fingerprint(dataset=dataset)
    assert second != first
    assert report_fingerprint(dataset=dataset, apply_exclusions=False) != second
    MetricScore.objects.filter(response__context__dataset=dataset, metric="length").update(value=1.0)
    assert report_fingerprint(dataset=dataset) != second


def test_report_check_recomputes_only_when_inputs_changed(usr_study, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    dataset = usr_study[0]
    report = report_get_or_create(dataset=dataset, params=report_params())
    report_refresh(report=report)
    computed_at = Report.objects.get(pk=report.pk).computed_at
    assert report_check(report=Report.objects.get(pk=report.pk)) is False
    assert Report.objects.get(pk=report.pk).computed_at == computed_at
    MetricScore.objects.filter(response__context__dataset=dataset, metric="length").update(value=2.0)
    assert report_check(report=Report.objects.get(pk=report.pk)) is True
    assert Report.objects.get(pk=report.pk).computed_at > computed_at


def test_jsonable_turns_numpy_and_nan_into_plain_json():
    value = _jsonable({"a": np.float64(0.5), "b": [np.int64(2), float("nan")], "c": (1, np.nan)})
    assert value == {"a": 0.5, "b": [2, None], "c": [1, None]}
    assert type(value["b"][0]) is int


def test_report_with_no_matching_ratings_is_empty_not_an_error(usr_study):
    dataset = usr_study[0]
    data = json.loads(run_report(dataset=dataset.name, format="json", systems="no-such-system"))
    assert data["n_responses"] == 0 and data["n_ratings"] == 0
    assert all(row["pearson"] is None for row in data["utterance_level"])
    assert data["system_level"] == [] or all(row["pearson"] is None for row in data["system_level"])


def test_latex_ranking_table_aligns_the_cluster_number_right_and_the_metric_name_left():
    data = {
        "dataset": "d",
        "significance": {
            "ranking": [
                {"cluster": 1, "metric": "bleu4", "pearson": 0.5, "n": 10},
                {"cluster": 2, "metric": "rouge_l", "pearson": 0.2, "n": 10},
            ],
            "method": {"permutations": 100, "alpha": 0.05},
        },
    }
    text = to_latex(data)
    ranking = text[text.index(r"\label{tab:metric-clusters}") :]
    assert ranking.splitlines()[1] == r"\begin{tabular}{rlrr}"
    assert r"1 & bleu4 & 0.500 & 10 \\" in ranking
