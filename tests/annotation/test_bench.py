import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_import_benchmark_runs_at_a_small_size(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "bench/bench_import.py", "--responses", "200", "--ratings", "600"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "import_dataset: 200 responses in" in result.stdout
    assert "import_ratings: 600 ratings in" in result.stdout
