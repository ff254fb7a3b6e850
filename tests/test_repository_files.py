"""Files the documented processes write into the project's folder are ignored by git."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ignored(path):
    result = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "-q", path], capture_output=True, check=False
    )
    if result.returncode not in (0, 1):
        pytest.skip(f"not a git checkout: {result.stderr.decode().strip()}")
    return result.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize(
    "path",
    # `celery -A config worker -B` or `celery -A config beat`, run from the root as docs/deployment.md says,
    # keeps its schedule in a shelve whose files depend on the dbm module (.db, or .dat/.dir/.bak)
    ["celerybeat-schedule", "celerybeat-schedule.db", "celerybeat-schedule.dat", "celerybeat-schedule.dir"],
)
def test_celery_beat_schedule_files_are_ignored(path):
    assert _ignored(path), f"{path} (written by celery beat in the project's root) is not in .gitignore"
