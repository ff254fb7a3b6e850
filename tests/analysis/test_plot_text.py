"""Plots print dataset text as it is: a system named with `$` is not matplotlib mathtext."""

from analysis import plots

NAME = r"$\bad{$ bot"


def test_a_system_name_with_dollar_signs_is_printed_not_parsed_as_mathtext_in_the_pairwise_plot():
    systems = [
        {"system": NAME, "strength": 0.2, "ci_low": 0.1, "ci_high": 0.3},
        {"system": "(reference)", "strength": -0.2, "ci_low": -0.3, "ci_high": -0.1},
    ]
    svg = plots.render(plots.pairwise_ranking(systems), "svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_a_system_name_with_dollar_signs_is_printed_in_the_system_level_plot():
    row = {
        "system": NAME,
        "human_mean": 3.0,
        "human_ci_low": 2.5,
        "human_ci_high": 3.5,
        "metrics": {"bleu1": {"mean": 0.2, "ci_low": 0.1, "ci_high": 0.3}},
    }
    assert plots.render(plots.system_scatter([row], "bleu1"), "png")[:4] == b"\x89PNG"
