"""bench/bench_annotators.py refuses to print figures for a run that measured nothing (issue 35)."""

import pytest

from bench.bench_annotators import BenchFailed, check_measured, check_same_database, database_name, serves


def _part(errors=(), idle=0):
    return {"errors": list(errors), "idle": idle}


def test_a_run_where_every_annotator_met_a_404_fails_loudly():
    parts = [_part([f"bench-{i}: start page answered 404" for i in range(25)], idle=25) for _ in range(2)]
    with pytest.raises(BenchFailed) as failed:
        check_measured(parts, 50)
    message = str(failed.value)
    assert "FAILED, no figures printed" in message
    assert "50 of 50 annotators met an error and 50 got no task" in message
    assert "start page answered 404" in message and "--database-url" in message
    assert failed.value.code != 0


def test_one_annotator_without_work_is_enough_to_fail():
    with pytest.raises(BenchFailed, match="0 of 10 annotators met an error and 1 got no task"):
        check_measured([_part(), _part(idle=1)], 10)


def test_a_clean_run_passes():
    check_measured([_part(), _part()], 10)


def test_settings_on_another_database_than_the_servers_fail(tmp_path):
    # Settings as the bench's own process has them (the test run's live settings name pytest's
    # in-memory database once any test has used one, so they are not a stable example).
    used = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "ratelab.sqlite3")}
    other = "postgres://postgres@127.0.0.1:5432/ratelab_perf_elsewhere"
    with pytest.raises(BenchFailed, match="not the --database-url"):
        check_same_database(other, used)
    check_same_database(f"sqlite:///{used['NAME']}", used)
    with pytest.raises(BenchFailed, match="not the --database-url"):
        check_same_database(other)  # this process's own settings: not that PostgreSQL database either


def test_only_the_benchs_database_backends_count_as_its_database_cpu():
    name = database_name("postgres://postgres@127.0.0.1:5432/ratelab_perf_bench?sslmode=disable")
    assert name == "ratelab_perf_bench"
    assert serves("postgres: 15/main: postgres ratelab_perf_bench 127.0.0.1(41234) idle", name)
    assert not serves("postgres: 15/main: postgres ratelab_judges 127.0.0.1(41236) UPDATE", name)
    assert serves("postgres: 15/main: walwriter ", name)
