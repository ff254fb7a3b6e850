"""The metric scores written beside each response (dataset page, JSONL export) at a realistic scale.

The export hands every response id of the dataset to `metric_extras`. Looked up together with a
join on the dataset, SQLite walked every context and probed the whole id list for each one, so a
3,000-context export spent 13 s there (14.6 s for the whole download). The work must grow with the
dataset, not with its square. SQLite's progress handler counts virtual-machine steps, which is a
measure of work that does not depend on how busy the machine is.
"""

import pytest
from django.db import connection

from annotation.models import Response
from scoring.models import MetricScore
from scoring.selectors.scores import metric_extras
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

SYSTEMS = ("a", "b", "c", "d", "e")


def _dataset(name, n_contexts):
    records = [
        {
            "context_id": f"{name}-{i}",
            "context": [f"turn {i}"],
            "responses": [{"system": system, "text": f"reply {i} {system}"} for system in SYSTEMS],
        }
        for i in range(n_contexts)
    ]
    dataset = load_dataset_records(records=records, name=name)
    responses = list(Response.objects.filter(context__dataset=dataset).values_list("pk", flat=True))
    MetricScore.objects.bulk_create(MetricScore(response_id=pk, metric="bleu4", value=0.5) for pk in responses)
    return dataset, responses


def _steps(call):
    """SQLite virtual-machine steps (in hundreds) that `call` costs."""
    steps = [0]

    def count():
        steps[0] += 1
        return 0  # carry on

    connection.ensure_connection()
    connection.connection.set_progress_handler(count, 100)
    try:
        result = call()
    finally:
        connection.connection.set_progress_handler(None, 100)
    return steps[0], result


@pytest.mark.skipif(connection.vendor != "sqlite", reason="counts SQLite virtual-machine steps")
def test_metric_extras_work_grows_linearly_with_the_dataset():
    small, small_ids = _dataset("small", 100)
    large, large_ids = _dataset("large", 800)
    small_steps, small_extras = _steps(lambda: metric_extras(small, small_ids))
    large_steps, large_extras = _steps(lambda: metric_extras(large, large_ids))
    assert len(small_extras) == len(small_ids) and len(large_extras) == len(large_ids)
    # 8 times the responses: linear work is about 8 times the steps, the quadratic plan was 64 times.
    assert large_steps < 16 * small_steps, (small_steps, large_steps)


def test_metric_extras_leave_out_responses_of_another_dataset():
    mine, mine_ids = _dataset("mine", 3)
    _, other_ids = _dataset("other", 3)
    extras = metric_extras(mine, mine_ids + other_ids)
    assert set(extras) == set(mine_ids)
    assert extras[mine_ids[0]] == {"metrics": {"bleu4": 0.5}}
