"""60 annotators at once against a live server on PostgreSQL: every submitted rating stored exactly
once, no assignment slot handed to two annotators."""

import threading
from collections import Counter

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import ThreadedWSGIServer
from django.db import connection
from django.test.testcases import LiveServerThread

from annotation import services
from annotation.models import Assignment, HITItem, Rating
from tests.annotation.live_annotator import LiveAnnotator
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

N_ANNOTATORS = 60


@pytest.fixture(autouse=True)
def _needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("the concurrency test needs PostgreSQL (DATABASE_URL=postgres://...)")


class RoomyWSGIServer(ThreadedWSGIServer):
    # socketserver's listen backlog is 5: sixty clients connecting in the same instant overflow it and
    # the kernel resets some connections before Django sees them. A real server (gunicorn) listens with
    # a backlog of 2048; give the test server room enough to measure the app, not the socket queue.
    request_queue_size = 256


class RoomyLiveServerThread(LiveServerThread):
    server_class = RoomyWSGIServer


@pytest.fixture
def roomy_live_server(transactional_db):
    thread = RoomyLiveServerThread("localhost", StaticFilesHandler)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://localhost:{thread.port}"
    thread.terminate()


# classic: Start, page, submit, thank-you page each task; next: "Submit and next task" (a third of the
# annotators send each submission twice, so the retried submit-and-claim is raced too).
@pytest.mark.parametrize("flow", ["classic", "next"])
def test_sixty_simultaneous_annotators_store_every_rating_once(roomy_live_server, researcher, flow):
    dataset = load_dataset_records(records=dataset_records(160, ("hred", "human")), name="busy", owner=researcher)
    survey = services.survey_create(
        dataset=dataset,
        name="busy",
        owner=researcher,
        contexts_per_hit=4,
        assignments_per_hit=3,
        attention_checks_per_hit=1,
        max_hits_per_annotator=3,
        # Every simulated annotator comes from this one machine's address.
        new_annotators_per_address_hour=100_000,
    )
    services.survey_launch(survey=survey)
    annotators = [
        LiveAnnotator(roomy_live_server, survey.token, f"worker-{i:03d}", flow=flow) for i in range(N_ANNOTATORS)
    ]
    start = threading.Barrier(N_ANNOTATORS)
    errors = []

    def work(annotator, index):
        start.wait()
        try:
            while annotator.do_hit(replay=index % 3 == 0):
                pass
        except Exception as error:
            errors.append(f"{annotator.worker_id}: {error}")

    threads = [threading.Thread(target=work, args=(a, i)) for i, a in enumerate(annotators)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors[:5]

    handed = Counter(token for a in annotators for token in a.tokens)
    assert handed and max(handed.values()) == 1, "no slot was handed out twice"
    owners = dict(Assignment.objects.filter(token__in=handed).values_list("token", "annotator__worker_id"))
    assert all(owners[token] == a.worker_id for a in annotators for token in a.tokens)
    assert Assignment.objects.filter(status="submitted").count() == len(handed) == 40 * 3

    stored = Counter(Rating.objects.values_list("annotator__worker_id", flat=True))
    for annotator in annotators:
        # every real reply of the annotator's HITs; a check's block (the check and its fillers, which
        # the page does not tell apart from real replies) is answered and checked, not stored
        real = HITItem.objects.filter(hit__assignments__token__in=annotator.tokens, kind=HITItem.Kind.RESPONSE)
        assert stored.get(annotator.worker_id, 0) == real.count(), annotator.worker_id
        # One who came when the faster ones had taken every slot (first come, first served: 60
        # annotators may take 3 of the 120 slots each) answered nothing and has nothing stored.
        assert real.count() < annotator.answered or not annotator.tokens, annotator.worker_id
    assert Rating.objects.count() == 160 * 2 * 3


def test_one_worker_in_many_tabs_holds_one_assignment(researcher):
    dataset = load_dataset_records(records=dataset_records(30, ("hred", "human")), name="tabs", owner=researcher)
    survey = services.survey_launch(
        survey=services.survey_create(dataset=dataset, name="tabs", owner=researcher, contexts_per_hit=3)
    )
    start = threading.Barrier(12)
    claimed, errors = [], []

    def tab():
        start.wait()
        try:
            claimed.append(services.assignment_claim(survey=survey, worker_id="same-person").pk)
        except Exception as error:
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=tab) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors[:3]
    assert len(claimed) == 12 and len(set(claimed)) == 1
    assert Assignment.objects.filter(annotator__worker_id="same-person").count() == 1
