"""Settings come from the environment and fail loudly; production settings pass check --deploy."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import checks

from annotation.models import Dataset, Survey

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DJANGO_DEBUG": "0",
    "SECRET_KEY": "x7-Qm9wz_Lr2VdP0cH4tYb8nK1sJ6uEo3fGi5aXyZ-RlMpNqTvWc",
    "ALLOWED_HOSTS": "ratelab.example.org",
}
# Variables a developer's shell may set that would change what the subprocess sees.
SCRUBBED = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "DJANGO_DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "PUBLIC_BASE_URL",
    "CACHE_URL",
    "DJANGO_SETTINGS_MODULE",
)


def manage(*args, **env):
    clean = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "mysql://db/ratelab"}, "DATABASE_URL='mysql://db/ratelab' has scheme 'mysql'; expected"),
        ({"DATABASE_URL": "postgres://u:s3cret@db:port/x"}, "DATABASE_URL cannot be parsed"),
        ({"CELERY_BROKER_URL": "redis//localhost:6379"}, "CELERY_BROKER_URL='redis//localhost:6379' has scheme ''"),
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG='maybe' is not a boolean"),
        ({"DJANGO_DEBUG": "0"}, "SECRET_KEY must be set when DJANGO_DEBUG=0"),
        ({"CELERY_TASK_TIME_LIMIT": "ten"}, "CELERY_TASK_TIME_LIMIT='ten' is not an integer"),
        ({"JUDGE_TIMEOUT_SECONDS": "0"}, "JUDGE_TIMEOUT_SECONDS=0 is below the minimum of 1"),
        ({"PROLIFIC_CURRENCY": "EUR"}, "PROLIFIC_CURRENCY='EUR' is not one of: GBP, USD"),
        (
            {"TRUSTED_PROXY_COUNT": "1", "RATELAB_TRUSTED_PROXIES": "2"},
            "TRUSTED_PROXY_COUNT and RATELAB_TRUSTED_PROXIES name the same number of proxies and differ (1 and 2)",
        ),
    ],
    ids=[
        "database-scheme",
        "database-port",
        "broker-scheme",
        "debug-value",
        "secret-key",
        "integer",
        "minimum",
        "prolific-currency",
        "proxies",
    ],
)
def test_a_bad_environment_value_stops_start_up_with_a_clear_message(env, message):
    result = manage("check", **env)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "s3cret" not in result.stderr


def test_a_password_in_a_bad_url_is_not_printed():
    result = manage("check", DATABASE_URL="mysql://user:hunter2@db/ratelab")
    assert result.returncode == 1
    assert "hunter2" not in result.stderr
    assert "mysql://user:***@db/ratelab" in result.stderr


def test_production_settings_pass_check_deploy_without_warnings():
    result = manage("check", "--deploy", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNINGS" not in result.stderr + result.stdout


def test_real_services_are_chosen_by_url():
    code = (
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL)"
    )
    result = manage(
        "shell",
        "-c",
        code,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/ratelab_x",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/1",
    )
    assert result.stdout.strip().splitlines()[-1].split() == [
        "django.db.backends.postgresql",
        "False",
        "redis://127.0.0.1:6379/1",
    ]
    embedded = manage("shell", "-c", code)
    assert embedded.stdout.strip().splitlines()[-1].split() == ["django.db.backends.sqlite3", "True"]


def check_ids(**kwargs):
    return [message.id for message in checks.run_checks(**kwargs) if message.id.startswith("ratelab.")]


def test_mturk_survey_without_public_base_url_fails_check_e001(db, settings):
    settings.PUBLIC_BASE_URL = ""
    dataset = Dataset.objects.create(name="d")
    assert check_ids(databases=["default"]) == []
    Survey.objects.create(dataset=dataset, name="on-mturk", provider=Survey.Provider.MTURK)
    assert check_ids(databases=["default"]) == ["ratelab.E001"]
    settings.PUBLIC_BASE_URL = "http://ratelab.example.org"
    assert sorted(check_ids(databases=["default"])) == ["ratelab.E001", "ratelab.W001"]
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    assert check_ids(databases=["default"]) == []


def test_public_base_url_must_be_an_absolute_url(settings):
    settings.PUBLIC_BASE_URL = "ratelab.example.org"
    assert check_ids() == ["ratelab.E002"]
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    assert check_ids() == []


@pytest.mark.parametrize("name", ["TRUSTED_PROXY_COUNT", "RATELAB_TRUSTED_PROXIES"])
def test_either_name_of_the_proxy_count_sets_it_for_every_use_of_the_client_address(name):
    # Two settings for one number: a server that set one read its proxy's address for every client
    # in the other use (all annotators capped together, or all logins throttled together).
    code = "from django.conf import settings; print('proxies', settings.TRUSTED_PROXY_COUNT)"
    result = manage("shell", "-c", code, **{name: "2"})
    assert result.returncode == 0 and "proxies 2" in result.stdout, result.stderr
