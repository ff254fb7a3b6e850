"""A real Celery worker judges a pairwise study's pairs in both orders, queued by the judge page's button.

Run with PostgreSQL and Redis, as the other `worker` tests:
    CELERY_BROKER_URL=redis://127.0.0.1:6379/9 DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_pairjudge \
        pytest -m worker tests/scoring/test_judges_pairwise_worker.py
"""

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.urls import reverse

from scoring.judges import prompts
from scoring.models import JudgeUsage
from scoring.services.judges.pairwise import cached_judge_statistics
from tests.scoring.judge_helpers import make_judge
from tests.scoring.test_judges_pairwise_study import N_CONTEXTS, picks_the_good_reply, study  # noqa: F401
from tests.scoring.test_metrics_worker import ROOT, worker_database_url


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_judges_the_pairs_the_button_queued(study, researcher, researcher_client, chat_server):  # noqa: F811
    if not settings.CELERY_BROKER_URL:
        pytest.skip("CELERY_BROKER_URL is unset: no broker to run a real worker against")
    chat_server.answer = picks_the_good_reply
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    env = {
        **os.environ,
        "JUDGE_ALLOW_PRIVATE_HOSTS": "1",  # the stand-in listens on 127.0.0.1
        "DATABASE_URL": worker_database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=WARNING",
         "-n", "ratelab-pairjudge-test@%h"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        answer = researcher_client.post(reverse("scoring:judge_dataset_pairs", args=[judge.pk]), {"dataset": study.pk})
        assert answer.status_code == 302
        deadline = time.monotonic() + 180
        while not JudgeUsage.objects.filter(judge=judge, requests__gt=0).exists() and time.monotonic() < deadline:
            time.sleep(0.5)
            assert worker.poll() is None, worker.stdout.read().decode()
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode()
    assert len(chat_server.requests) == 2 * N_CONTEXTS, output
    (row,) = cached_judge_statistics(dataset=study)
    assert (row["judge"], row["agreement"], row["self_consistency"], row["position_bias"]) == ("oracle", 1.0, 1.0, 0.5)
