"""Plots print dataset text as it is (a system named with `$` is not matplotlib mathtext), and the
disk cache of drawn plots takes two writers at once."""

import threading
from pathlib import Path
from types import SimpleNamespace

from analysis.report import plots

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


def test_two_requests_drawing_the_same_plot_at_once_both_get_it(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path
    report = SimpleNamespace(
        pk=7, fingerprint="f" * 40, vectors={}, data={"pairwise": {"systems": [
            {"system": "a", "strength": 0.1, "ci_low": 0.0, "ci_high": 0.2},
            {"system": "b", "strength": -0.1, "ci_low": -0.2, "ci_high": 0.0},
        ]}},
    )  # fmt: skip
    both_written = threading.Barrier(2, timeout=20)
    replace = Path.replace

    def replace_after_both_wrote(self, target):
        both_written.wait()  # both requests have written their file before either renames it
        return replace(self, target)

    monkeypatch.setattr(Path, "replace", replace_after_both_wrote)
    results, errors = [], []

    def draw():
        try:
            results.append(plots.plot_bytes(report, "pairwise", None, "svg"))
        except Exception as error:  # the assertion below names it
            errors.append(error)

    threads = [threading.Thread(target=draw) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 2 and all(svg.startswith(b"<?xml") for svg in results)
