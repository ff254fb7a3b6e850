"""Fixtures the scoring test modules share."""

import socket

import pytest

from scoring.services.metrics import compute as metric_services
from tests.factories import load_dataset_records, load_rating_records
from tests.scoring.chat_server import ChatServer
from tests.shared_loaders import usr_personachat


@pytest.fixture
def usr(db, shared_data, researcher):
    """The USR-PersonaChat study (no ground-truth system), owned by the researcher, with its ratings."""
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    dataset = load_dataset_records(records=records, name="usr-pc", owner=researcher)
    load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall", owner=researcher)
    return dataset


@pytest.fixture
def chat_server():
    """A local OpenAI-compatible chat-completions server (tests.scoring.chat_server), stopped after the test."""
    server = ChatServer().start()
    yield server
    server.stop()


@pytest.fixture
def dead_url():
    """The base URL of a local port with nothing listening: every connection to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def silent_url():
    """The base URL of a local port whose server never accepts: its queue of waiting connections
    is full, so the kernel drops every new attempt, as a host that silently drops packets does."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    waiting = []
    for _ in range(3):  # fill the accept queue (backlog 0 still queues one)
        client = socket.socket()
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
        waiting.append(client)
    yield f"http://127.0.0.1:{port}/v1"
    for sock in [*waiting, server]:
        sock.close()


@pytest.fixture
def compute(django_capture_on_commit_callbacks):
    """metrics_compute, running its on-commit dispatch (the test's transaction never commits)."""

    def run(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return metric_services.metrics_compute(**kwargs)

    return run


SMALL_HEAD_SETTINGS = {"windows": 150, "negatives": 2, "seed": 0, "penalty": 1.0, "corpus": "chitchat-dataset"}
_small_heads = {}  # the precision they were trained on -> heads


@pytest.fixture(autouse=True)
def small_next_utterance_heads(monkeypatch):
    """The stacked kind's next-utterance heads trained on 150 Chit-Chat windows, not 6,000.

    The same training code as the cached heads (scoring.learned.reference_free.next_utterance),
    on a slice that trains in seconds, once per test process and only when a test needs it;
    a test that checks the on-disk cache itself calls `next_utterance.heads(directory)` unpatched.
    """
    from scoring.learned.reference_free import DEFAULT_PRECISION, next_utterance

    original = next_utterance.heads

    def small(directory=None, *, settings=None, precision=DEFAULT_PRECISION):
        if directory is not None or settings is not None:
            return original(directory, settings=settings or next_utterance.SETTINGS, precision=precision)
        # Shared the way the cached heads are: `auto` reads float32's, trained on float32 vectors.
        trained_on = next_utterance.training_precision(precision)
        if trained_on not in _small_heads:
            from scoring.adem.vhred.corpus import chitchat_dialogues

            _small_heads[trained_on] = next_utterance.train_heads(
                chitchat_dialogues(), settings=SMALL_HEAD_SETTINGS, precision=trained_on
            )
        return _small_heads[trained_on]

    monkeypatch.setattr(next_utterance, "heads", small)
