"""The report's display tables from a stored report dict (no database)."""

from analysis.report import cells
from analysis.sections import agreement, base, correlations, system_level, williams
from analysis.services import page
from analysis.services.exports import to_csv


def report(**extra):
    data = {
        "n_responses": 40,
        "n_ratings": 120,
        "n_systems": 2,
        "metrics": ["bleu2", "rouge_l"],
        "method": {"bootstrap_samples": 1000, "seed": 0},
        "utterance_level": [
            {"metric": "bleu2", "pearson": 0.1234567, "pearson_p": 0.00001, "pearson_ci_low": -0.00004,
             "pearson_ci_high": 0.3, "spearman": None, "spearman_p": None, "spearman_ci_low": None,
             "spearman_ci_high": None, "n": 40},
            {"metric": "rouge_l", "pearson": 0.4, "pearson_p": 0.2, "pearson_ci_low": 0.1, "pearson_ci_high": 0.6,
             "spearman": 0.35, "spearman_p": 0.04, "spearman_ci_low": 0.0, "spearman_ci_high": 0.5, "n": 12345},
        ],
        "williams": [{"a": "rouge_l", "b": "bleu2", "r_a": 0.4, "r_b": 0.12, "r_ab": 0.5, "n": 40, "t": 2.1,
                      "p": 0.02, "p_two_sided": 0.04}],
        "systems": [
            {"system": "seq2seq", "n": 20, "human_mean": 3.14159, "human_ci_low": 2.9, "human_ci_high": 3.3,
             "metrics": {"bleu2": {"mean": 0.2, "ci_low": 0.1, "ci_high": 0.3}}},
            {"system": "human", "n": 20, "human_mean": 4.5, "human_ci_low": 4.2, "human_ci_high": 4.7,
             "metrics": {"rouge_l": {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}}},
        ],
        "filters": {"apply_exclusions": True, "n_ratings_before_exclusions": 120, "excluded_annotators": []},
    }  # fmt: skip
    return data | extra


def test_cells_are_rounded_and_intervals_are_one_cell():
    rows = correlations.utterance_table(report()).rows
    assert rows[0] == ["bleu2", "0.123", "[0.000, 0.300]", "<0.001", "–", "–", "–", "–", "–", "40"]
    assert rows[1][-1] == "12,345" and rows[1][5] == "[0.000, 0.500]"


def test_number_never_uses_scientific_notation():
    assert cells.number(2.2e-16) == "0.000"
    assert cells.number(-0.0004) == "0.000"
    assert cells.p_value(0.0004) == "<0.001"


def test_systems_table_puts_systems_in_columns_and_marks_missing_metrics():
    table = system_level.systems_table(report())
    assert [column.label for column in table.columns] == ["Measure", "seq2seq", "human"]
    assert [str(cell) for cell in table.rows[1]] == ["Human", "3.14 [2.90, 3.30]", "4.50 [4.20, 4.70]"]
    assert [str(cell) for cell in table.rows[2]] == ["bleu2", "0.200 [0.100, 0.300]", "– –"]


def test_williams_compact_table_names_the_best_metric_and_the_full_table_keeps_every_pair():
    table = williams.williams_table(report())
    assert "rouge_l" in table.title
    assert table.rows == [["bleu2", "0.400", "0.120", "2.100", "0.020", "yes"]]
    assert table.full.total_rows == 1 and table.full.rows[0][:2] == ["rouge_l", "bleu2"]


def test_metric_tables_show_every_metric_and_annotator_tables_are_cut():
    many = report(utterance_level=[{"metric": f"m{i}", "n": 3} for i in range(40)])
    assert len(page.display_table(many, "utterance_level").rows) == 40


def test_long_tables_are_cut_to_the_page_rows_but_know_their_length():
    pairs = [{"a": f"w{i}", "b": f"w{i + 1}", "n": i, "kappa": 0.5} for i in range(60)]
    table = page.display_table(report(agreement={"pairs": pairs}), "agreement_pairs")
    assert len(table.rows) == base.PAGE_ROWS and table.total_rows == 60 and table.truncated
    assert table.rows[0][:3] == ["w59", "w60", "59"]  # most shared items first


def test_why_empty_explains_exclusions_and_missing_metrics_once():
    excluded = report(n_ratings=0, filters={"apply_exclusions": True, "n_ratings_before_exclusions": 42,
                                            "excluded_annotators": ["ann-1", "ann-2"]})  # fmt: skip
    assert page.why_empty(excluded).startswith(
        "All 42 ratings were excluded by the quality rules (excluded: ann-1, ann-2)"
    )
    assert [t.name for t in page.display_tables(excluded)] == ["agreement_annotators", "agreement_pairs"]
    assert page.why_empty(report(metrics=[])).startswith("No metric scores yet")
    assert page.why_empty(report(n_ratings=0, filters={})).startswith("No ratings or pairwise judgements yet")
    # A pairwise study: its ranking is the report; all of its judgements excluded is said as such.
    assert page.why_empty(report(n_ratings=0, filters={}, pairwise={"n_judgements": 8})) == ""
    all_pairs_out = {"apply_exclusions": True, "n_judgements_before_exclusions": 48, "excluded_annotators": ["A1"]}
    assert page.why_empty(report(n_ratings=0, filters=all_pairs_out)).startswith(
        "All 48 pairwise judgements were excluded by the quality rules (excluded: A1)"
    )
    assert page.why_empty(report()) == ""


def test_exclusion_reasons_read_as_rule_and_detail_not_as_a_python_dict():
    reasons = [{"rule": "kappa", "detail": "mean kappa 0.13 over 1 pair"}, {"rule": "speed"}]
    annotators = [{"worker": "w1", "kappa": 0.1, "kappa_judged": 0.13, "excluded": True, "reasons": reasons}]
    table = agreement.agreement_annotators_table(report(agreement={"annotators": annotators}))
    assert table.rows == [["w1", "0.100", "0.130", "yes", "kappa: mean kappa 0.13 over 1 pair; speed"]]


def test_the_annotators_table_shows_the_kappa_the_rule_judged_beside_the_mean_kappa():
    """A kept annotator with a lower mean κ than an excluded one reads as a contradiction unless
    the table shows the κ the rule compared with its threshold (over the agreeing annotators)."""
    annotators = [
        {"worker": "kept", "kappa": 0.173, "kappa_judged": 0.235, "excluded": False, "reasons": []},
        {"worker": "out", "kappa": 0.165, "kappa_judged": 0.194, "excluded": True, "reasons": []},
    ]
    data = report(agreement={"annotators": annotators})
    table = agreement.agreement_annotators_table(data)
    assert [c.label for c in table.columns][:3] == ["Annotator", "Mean κ", "Judged κ"]
    assert table.rows[0][:3] == ["out", "0.165", "0.194"] and table.rows[1][:3] == ["kept", "0.173", "0.235"]
    assert "which the κ rule compares with its threshold" in table.note
    header, *lines = to_csv(data, "agreement_annotators").splitlines()
    assert header == "worker,kappa,kappa_judged,excluded,reasons"
    assert lines[0].startswith("kept,0.173,0.235,False")
