"""One p-value format on every page, and the tie threshold written as a number (browser walk F18).

The walk saw "0.000" in the ranking's neighbours table, "<0.001" in the correlation tables,
"p = 5.58e-05" on the ADEM model page, and a tie threshold of 1.4e-18 printed "<0.001".
"""

from types import SimpleNamespace

from django.template.loader import render_to_string

from analysis.report.cells import p_value as report_p_value
from analysis.sections.pairwise_accuracy import pairwise_accuracy_table
from analysis.services.exports import summary_table
from annotation.services.text.numbers import p_value, small_number


def test_p_values_are_below_a_thousandth_or_three_decimals():
    assert [p_value(v) for v in (0.0, 5.58e-05, 0.000999, 0.001, 0.04213, 1.0, None)] == [
        "<0.001", "<0.001", "<0.001", "0.001", "0.042", "1.000", "–",
    ]  # fmt: skip
    assert report_p_value is p_value  # the report's tables use the same function


def test_a_tiny_tie_threshold_is_a_number_not_a_p_value():
    assert small_number(1.4e-18) == "1.4e-18"
    assert small_number(0.0) == "0.000"
    assert small_number(0.25) == "0.250"
    data = {
        "pairwise_accuracy": {
            "system_level": [],
            "utterance_level": [
                {"metric": "bleu2", "accuracy": 0.6, "epsilon": 1.4e-18, "accuracy_untied": 0.5, "n_pairs": 10,
                 "n_contexts": 3, "human_ties": 1},
            ],
        }
    }  # fmt: skip
    row = pairwise_accuracy_table(data).rows[0]
    assert "1.4e-18" in [str(cell) for cell in row]
    assert "<0.001" not in [str(cell) for cell in row]


def test_the_ranking_neighbours_print_p_as_the_other_tables_do():
    pairwise = {
        "systems": [],
        "matrix": [],
        "metrics": [],
        "adjacent": [{"higher": "human", "lower": "hred", "p_value": 0.0, "significant": True},
                     {"higher": "hred", "lower": "tfidf", "p_value": 0.4567, "significant": False}],
    }  # fmt: skip
    html = render_to_string(
        "analysis/sections/pairwise.html",
        {"pairwise": pairwise, "report": SimpleNamespace(pk=1), "dataset": SimpleNamespace(pk=1)},
    )
    assert '<td class="num">&lt;0.001</td>' in html and '<td class="num">0.457</td>' in html
    assert "0.000" not in html


def test_the_terminal_summary_uses_the_same_p_format():
    data = {"dataset": "d", "utterance_level": [{"metric": "m", "pearson": 0.5, "pearson_p": 5.58e-05,
            "spearman": 0.4, "spearman_p": 0.0421, "n": 40}]}  # fmt: skip
    text = summary_table(data)
    assert "<0.001" in text and "0.042" in text and "e-05" not in text


def test_the_adem_model_page_prints_p_as_the_report_does(db):
    model = SimpleNamespace(
        pk=7, name="m", dataset=None, owner_id=None, metric_name="adem:m", encoder="minilm", config={},
        results={"test": {"pearson": 0.51, "pearson_p": 5.58e-05, "spearman": 0.3, "spearman_p": 0.0421, "n": 45},
                 "system_level": {}},
        training_data={},
    )  # fmt: skip
    html = render_to_string(
        "scoring/adem/model_detail.html", {"model": model, "run": None, "user": SimpleNamespace(id=1)}
    )
    assert "(p &lt;0.001)" in html and "(p = 0.042)" in html
    assert "e-05" not in html


def test_train_adems_printout_uses_the_same_p_format():
    from scoring.management.commands.train_adem import _p

    assert (_p(0.00288), _p(5.58e-05)) == ("p = 0.003", "p <0.001")
