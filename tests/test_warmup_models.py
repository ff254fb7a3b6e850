"""The metric models load at a worker's start, on a thread, once (F02): the first run does not wait
a minute for them, and a resource that cannot load stops nothing."""

import logging

import pytest

from config import celery as celery_config
from config.runtime import warmup
from scoring.metrics import resources


@pytest.fixture
def loads(monkeypatch):
    """Record `resources.load_all` calls instead of loading torch, Java and WordNet here."""
    calls = []
    monkeypatch.setattr(resources, "load_all", lambda keys=None: calls.append(keys) or {"minilm": 1.0})
    return calls


def test_the_model_warm_up_loads_every_resource_on_a_thread(monkeypatch, loads):
    monkeypatch.setenv("RATELAB_WARM_MODELS", "1")
    monkeypatch.setenv("RATELAB_WARMUP", "1")
    thread = warmup.warm_models_in_background()
    thread.join(30)
    assert thread.daemon and not thread.is_alive()
    assert loads == [None]


@pytest.mark.parametrize("variable", ["RATELAB_WARM_MODELS", "RATELAB_WARMUP"])
def test_the_model_warm_up_is_off_when_either_switch_is_off(monkeypatch, loads, variable):
    monkeypatch.setenv("RATELAB_WARM_MODELS", "1")
    monkeypatch.setenv("RATELAB_WARMUP", "1")
    monkeypatch.setenv(variable, "0")
    assert warmup.warm_models_in_background() is None
    assert loads == []


def test_a_celery_pool_process_starts_the_model_warm_up(monkeypatch):
    started = []
    monkeypatch.setattr(warmup, "warm", lambda modules: None)
    monkeypatch.setattr(warmup, "warm_models_in_background", lambda: started.append(True))
    celery_config._warm_up_pool_process()
    assert started == [True]


def test_a_resource_that_cannot_load_is_logged_and_the_others_still_load(monkeypatch, caplog):
    loaded = []

    def broken():
        raise RuntimeError("METEOR needs Java")

    monkeypatch.setattr(resources, "_ensured", set())
    monkeypatch.setattr(
        resources,
        "_RESOURCES",
        {
            "broken": resources.Resource("broken", "the jar", 1.0, broken, lambda: False),
            "fine": resources.Resource("fine", "the vectors", 1.0, lambda: loaded.append(1), lambda: bool(loaded)),
        },
    )
    with caplog.at_level(logging.WARNING, logger="scoring.metrics.resources"):
        took = resources.load_all()
    assert list(took) == ["fine"] and loaded == [1]
    assert "the jar not loaded: METEOR needs Java" in caplog.text
