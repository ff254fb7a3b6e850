"""Arena-scale Bradley-Terry, Rank (UB), the Elo scale, and length/style control (issue 39), against
hand computations and independent fits (the existing L-BFGS fit, and FastChat's per-resample
method written out here on a small case)."""

import numpy as np
import pytest
from scipy import optimize

from analysis.stats import pairwise
from analysis.stats.arena import (
    arena_ranking,
    bootstrap_strengths,
    fit_strengths,
    point_strengths,
    rank_upper_bound,
    to_elo,
    unique_outcomes,
)
from analysis.stats.style_control import (
    length_controlled_win_rate,
    rank_changes,
    style_controlled_strengths,
    style_features,
)


def votes(n=3000, n_systems=5, seed=3, ties=0.1):
    rng = np.random.default_rng(seed)
    true = np.linspace(-1, 1, n_systems)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    p = 1 / (1 + np.exp(true[b] - true[a]))
    u = rng.random(n)
    outcome = np.where(u < (1 - ties) * p, 1.0, np.where(u > 1 - (1 - ties) * (1 - p), 0.0, 0.5))
    return a, b, outcome


def test_unique_outcomes_collapse_votes_in_lexicographic_order():
    # Votes (0 vs 1: b won), (0 vs 1: a won) twice, (1 vs 0: tie) -> rows (0,1,0)x1, (0,1,1)x2, (1,0,.5)x1.
    first, second, outcome, counts = unique_outcomes([0, 0, 1, 0], [1, 1, 0, 1], [1, 1, 0.5, 0], 2)
    assert first.tolist() == [0, 0, 1] and second.tolist() == [1, 1, 0]
    assert outcome.tolist() == [0.0, 1.0, 0.5] and counts.tolist() == [1, 2, 1]


def test_two_systems_fit_the_log_odds_by_hand():
    # 3 wins to 1: P(0 beats 1) = 3/4, so s0 - s1 = ln 3 and, centred, s = (ln 3 / 2, -ln 3 / 2).
    strengths = fit_strengths(np.array([[0.0, 3.0], [1.0, 0.0]]))
    assert strengths == pytest.approx([np.log(3) / 2, -np.log(3) / 2], abs=1e-4)  # the ridge moves it < 1e-4


def test_newton_fit_agrees_with_the_existing_lbfgs_fit_and_batches():
    a, b, outcome = votes()
    wins = pairwise.win_counts(a, b, outcome, 5)
    newton = fit_strengths(wins)
    assert newton == pytest.approx(pairwise.bradley_terry(wins), abs=1e-4)
    assert point_strengths(a, b, outcome, 5) == pytest.approx(newton, abs=1e-9)
    batch = fit_strengths(np.stack([wins, wins.T]))
    assert batch[0] == pytest.approx(newton, abs=1e-9)
    assert batch[1] == pytest.approx(-newton, abs=1e-9)  # every result reversed: strengths mirrored


def test_a_system_that_never_loses_stays_finite():
    wins = np.array([[0.0, 5.0, 4.0], [0.0, 0.0, 2.0], [0.0, 1.0, 0.0]])
    strengths = fit_strengths(wins)
    assert np.all(np.isfinite(strengths)) and np.argmax(strengths) == 0


def fastchat_style_resamples(votes, n_systems, n_boot, seed=0):
    """FastChat's bootstrap written out: the same multinomial draws over the unique rows, then one
    L-BFGS fit per resample of the weighted Bradley-Terry loss, independently of arena.py's Newton."""
    a, b, outcome = votes
    rows = np.unique(np.column_stack([a, b, np.rint(outcome * 2)]).astype(int), axis=0, return_counts=True)
    (table, counts), n = rows, len(a)
    draws = np.random.default_rng(seed).multinomial(n, counts / n, size=n_boot) / n
    first, second, result = table[:, 0], table[:, 1], table[:, 2] / 2

    def loss(s, w):
        logit = s[first] - s[second]
        value = np.sum(w * (np.logaddexp(0, logit) - result * logit))
        residual = w * (1 / (1 + np.exp(-logit)) - result)
        return value, np.bincount(first, residual, n_systems) - np.bincount(second, residual, n_systems)

    fits = []
    for w in draws:
        s = optimize.minimize(
            loss, np.zeros(n_systems), args=(w,), jac=True, method="L-BFGS-B", options={"gtol": 1e-10}
        ).x
        fits.append(s - s.mean())
    return np.array(fits)


def test_bootstrap_draws_the_same_resamples_as_fastchat_and_blocks_do_not_change_them():
    a, b, outcome = votes(n=2000)
    point, samples = bootstrap_strengths(a, b, outcome, 5, n_boot=40, seed=0)
    _, in_blocks = bootstrap_strengths(a, b, outcome, 5, n_boot=40, seed=0, block=7)
    assert in_blocks == pytest.approx(samples, abs=1e-10)
    reference = fastchat_style_resamples((a, b, outcome), 5, 40)
    # Our ridge (1e-4 on counts) is the only difference: far below the resampling spread (~0.05).
    assert samples == pytest.approx(reference, abs=1e-4)
    assert point == pytest.approx(fit_strengths(pairwise.win_counts(a, b, outcome, 5)), abs=1e-9)


def test_rank_upper_bound_counts_systems_surely_better():
    # Intervals [3, 5], [1, 2.5], [0, 4]: system 1's upper bound 2.5 is below system 0's lower bound 3,
    # so its Rank (UB) is 2; nothing is surely above systems 0 and 2.
    assert rank_upper_bound([3, 1, 0], [5, 2.5, 4]).tolist() == [1, 2, 1]


def test_elo_scale_converts_log_strengths_as_fastchat():
    # A natural-log strength of ln 10 is ten-to-one odds against a strength-0 system: 400 points.
    assert to_elo([np.log(10), 0.0]).tolist() == pytest.approx([1400.0, 1000.0])


def test_arena_ranking_lists_systems_best_first_with_intervals_and_rank():
    a, b, outcome = votes(n=4000)
    names = ["v", "w", "x", "y", "z"]
    rows = arena_ranking(names, a, b, outcome, n_boot=60, scale="elo")
    assert [row["system"] for row in rows] == names[::-1]  # true strengths increase with the index
    assert all(row["ci_low"] <= row["strength"] <= row["ci_high"] for row in rows)
    assert rows[0]["rank_ub"] == 1 and rows[-1]["rank_ub"] > 1
    assert sum(row["votes"] for row in rows) == 2 * len(a)
    with pytest.raises(ValueError):
        arena_ranking(names, a, b, outcome, n_boot=0, scale="glicko")


def test_length_control_with_equal_lengths_is_the_raw_win_rate():
    # No length difference: the length term is 0, the intercept's MLE is logit(3/4): LC = raw = 0.75.
    result = length_controlled_win_rate([1, 1, 1, 0], [10, 20, 30, 40], [10, 20, 30, 40])
    assert result["win_rate"] == 0.75 and result["lc_win_rate"] == pytest.approx(0.75, abs=1e-5)
    assert result["note"] is None


def test_length_control_removes_a_verbosity_preference():
    # Equal quality (theta = 0) but the judge prefers the longer answer; the system is usually longer.
    rng = np.random.default_rng(5)
    system_length = rng.integers(50, 400, 2000)
    baseline_length = rng.integers(20, 200, 2000)
    gap = system_length - baseline_length
    preference = (rng.random(2000) < 1 / (1 + np.exp(-1.5 * np.tanh(gap / gap.std())))).astype(float)
    result = length_controlled_win_rate(preference, system_length, baseline_length)
    assert result["win_rate"] > 0.6
    assert result["lc_win_rate"] == pytest.approx(0.5, abs=0.05)
    assert result["phi"] > 1 and "differs" in result["note"]


def test_rank_changes_name_the_systems_that_move():
    # Raw order 0 > 1 > 2 (ranks 1, 2, 3); controlled 1 > 0 > 2: systems 0 and 1 swap, 2 stays.
    assert rank_changes([2.0, 1.0, 0.0], [1.0, 2.0, 0.0]) == {0: (1, 2), 1: (2, 1)}
    assert rank_changes([1.0, 0.0], [0.5, 0.1]) == {}


def test_style_features_count_markdown():
    text = "# Title\n**bold** text\n- one\n- two\n1. three"
    # Words: #, Title, **bold**, text, -, one, -, two, 1., three = 10; one header, one bold, three items.
    assert style_features(text) == {"length": 10, "headers": 1, "bold": 1, "lists": 3}


def test_style_control_separates_length_from_quality():
    # Five equally good systems whose answers differ in length; voters prefer the longer answer.
    rng = np.random.default_rng(11)
    n = 6000
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    typical = np.array([50, 100, 150, 200, 250])
    length_a, length_b = rng.poisson(typical[a]), rng.poisson(typical[b])
    share = (length_a - length_b) / (length_a + length_b)
    outcome = (rng.random(n) < 1 / (1 + np.exp(-4 * share))).astype(float)
    result = style_controlled_strengths((a, b, outcome), 5, {"length": length_a}, {"length": length_b}, n_boot=20)
    assert np.ptp(result["raw_strengths"]) > 0.8  # raw: longer systems look much better
    assert np.ptp(result["strengths"]) < 0.2  # controlled: about equal
    assert result["style"]["length"] > 0
    assert np.all(result["ci_low"] <= result["strengths"]) and np.all(result["strengths"] <= result["ci_high"])
    # Without covariates the raw strengths are the plain Bradley-Terry fit.
    assert result["raw_strengths"] == pytest.approx(fit_strengths(pairwise.win_counts(a, b, outcome, 5)), abs=1e-3)


def test_no_length_controlled_rate_when_every_answer_is_on_one_side_of_the_baseline():
    # The demo's case: 24 answers, all shorter than the baseline's, one win. The rate at equal length
    # lies outside the data; the fit unguarded put it at 100%.
    shorter = length_controlled_win_rate([1] + [0] * 23, [5] * 24, [12] * 24)
    assert shorter["win_rate"] == pytest.approx(1 / 24) and shorter["lc_win_rate"] is None
    assert shorter["phi"] is None and shorter["n"] == 24 and "every answer was shorter" in shorter["note"]
    longer = length_controlled_win_rate([1, 1, 0], [30, 40, 50], [10, 10, 10])
    assert longer["lc_win_rate"] is None and "every answer was longer" in longer["note"]
    # One answer as long as the baseline's puts equal length inside the data: the rate is fitted.
    assert length_controlled_win_rate([1, 0, 0], [12, 5, 6], [12, 12, 12])["lc_win_rate"] is not None


def test_the_controlled_table_names_the_system_of_each_length_note():
    from analysis.sections.arena import controlled_table

    note = length_controlled_win_rate([1] + [0] * 23, [5] * 24, [12] * 24)
    fitted = length_controlled_win_rate([1, 1, 1, 0], [10, 20, 30, 40], [10, 20, 30, 40])
    style_rows = [
        {"system": name, "raw_strength": 0.0, "strength": 0.0, "raw_rank": 1, "rank": 1} for name in ("lstm", "vhred")
    ]
    arena = {
        "baseline": "(reference)",
        "length_controlled": [{"system": "lstm", **note}, {"system": "vhred", **fitted}],
        "style_controlled": {"systems": style_rows, "note": None},
    }
    table = controlled_table({"arena": arena})
    assert table.note == f"lstm: {note['note']}."
    assert [row[:3] for row in table.rows] == [["lstm", "0.042", "–"], ["vhred", "0.750", "0.750"]]
