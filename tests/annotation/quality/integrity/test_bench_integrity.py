"""The integrity bench runs and prints every flag and both competence correlations."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.slow
def test_integrity_bench_runs_on_one_seed():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "bench/bench_integrity.py", "--seeds", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for name in (
        "mostly_pasted",
        "typed_too_fast",
        "length_beyond_typed",
        "near_duplicate",
        "straight_lining",
        "near_zero_variance",
        "one_side_always",
        "too_fast",
        "far_from_consensus",
        "MACE θ",
        "Dawid-Skene",
        "ordinal spammer model θ",
    ):
        assert name in result.stdout
