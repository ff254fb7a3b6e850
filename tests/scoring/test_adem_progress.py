"""An ADEM run's page says what the run does before its first epoch (F16): loading the encoder,
encoding n of m texts part by part, then the epoch; the progress JSON carries the same."""

import numpy as np
import pytest
from django.urls import reverse

from scoring.adem.cache import VectorCache, encode
from scoring.adem.encoders.glove import GloveEncoder
from scoring.models import TrainingRun
from scoring.services.adem import progress as adem_progress
from scoring.services.adem.training import adem_train

FAST = {"max_epochs": 3, "patience": 3}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


class Batched(GloveEncoder):
    """An encoder that reports progress after each batch of two texts, as the MiniLM encoder does."""

    reports_progress = True

    def encode_texts(self, texts, progress=None):
        out = []
        for start in range(0, len(texts), 2):
            out.append(super().encode_texts(texts[start : start + 2]))
            if progress is not None:
                progress(min(start + 2, len(texts)), len(texts))
        return np.concatenate(out)


def test_encoding_reports_the_texts_the_cache_lacks_batch_by_batch(tmp_path):
    cache = VectorCache(tmp_path / "v.sqlite")
    seen = []
    encode(
        Batched(),
        ["a dog", "a cat", "a cow", "a dog", "a hen"],
        kind="text",
        cache=cache,
        progress=lambda *a: seen.append(a),
    )
    assert seen == [(0, 4), (2, 4), (4, 4)]  # 4 distinct texts, in batches of 2
    seen.clear()
    encode(Batched(), ["a dog", "a fox"], kind="text", cache=cache, progress=lambda *a: seen.append(a))
    assert seen == [(0, 1), (1, 1)]  # only the new one is encoded


def test_an_encoder_without_batch_reports_is_reported_at_its_start_and_end(tmp_path):
    seen = []
    encode(GloveEncoder(), ["a dog", "a cat"], kind="text", progress=lambda *a: seen.append(a))
    assert seen == [(0, 2), (2, 2)]


@pytest.mark.shared_data
def test_a_training_run_records_loading_encoding_and_epochs_as_it_goes(usr, researcher, monkeypatch):
    phases = []
    real = adem_progress.training_run_phase_set
    monkeypatch.setattr(adem_progress, "PHASE_EVERY_S", 0)

    def spy(*, run, phase):
        phases.append(dict(phase))
        real(run=run, phase=phase)

    monkeypatch.setattr(adem_progress, "training_run_phase_set", spy)
    run = TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, owner=researcher, dataset=usr)
    adem_train(dataset=usr, name="phases", encoder="glove", owner=researcher, config=FAST, run=run)
    steps = [(p["step"], p.get("part"), p.get("done"), p.get("total"), p.get("epoch")) for p in phases]
    responses = phases[0]["responses"]
    assert responses == 240  # USR-PersonaChat without its ground truth: 60 contexts x 4 systems
    assert steps[0] == ("encoding", "", 0, 0, None)  # the encoder loads first
    encoding = [s for s in steps if s[0] == "encoding" and s[1]]
    assert [s[1] for s in encoding] == ["contexts", "contexts", "references", "references", "responses", "responses"]
    assert all(s[3] > 0 for s in encoding) and encoding[-1][2] == encoding[-1][3]
    epochs = [s[4] for s in steps if s[0] == "training"]
    assert epochs[0] == 0 and epochs[1:] == list(range(1, len(epochs)))
    run.refresh_from_db()
    assert run.status == "done" and len(run.progress) == len(epochs) - 1


def _frozen(researcher, phase, status=TrainingRun.Status.RUNNING):
    return TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, owner=researcher, status=status, phase=phase)


ENCODING = {"step": "encoding", "part": "references", "done": 120, "total": 300, "responses": 300}


def test_the_progress_json_carries_the_encoding_phase(researcher_client, researcher):
    run = _frozen(researcher, ENCODING)
    data = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert data["phase"]["part"] == "references" and data["progress"] == []
    assert data["phase_text"].startswith(
        "Encoding 300 rated responses with their contexts and references (only texts the vector cache lacks): "
        "contexts → references 120/300 → responses; "
    )
    assert data["phase_text"].endswith(" s so far.")
    assert data["phase_fraction"] == pytest.approx((1 + 120 / 300) / 3)


def test_the_run_page_shows_the_phase_instead_of_an_empty_curve(researcher_client, researcher):
    run = _frozen(researcher, ENCODING)
    page = researcher_client.get(reverse("scoring:adem_run", args=[run.pk])).content.decode()
    assert "references 120/300" in page
    assert '<progress id="run-phase-bar" class="phase-bar" max="100" value="46.7">' in page
    curve = page[page.index('<img id="run-curve"') :].split(">", 1)[0]
    assert " hidden" in curve and "src=" not in curve  # no empty axes drawn (nor requested)


def test_the_phase_names_the_epoch_while_training(researcher_client, researcher):
    phase = {"step": "training", "epoch": 3, "max_epochs": 200, "patience": 15, "folds": 0}
    run = _frozen(researcher, phase)
    data = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert data["phase_text"].startswith("Training: epoch 3, at most 200 epochs")
    assert data["phase_fraction"] is None


def test_an_ended_run_shows_no_phase(researcher_client, researcher):
    run = _frozen(researcher, ENCODING, status=TrainingRun.Status.FAILED)
    page = researcher_client.get(reverse("scoring:adem_run", args=[run.pk])).content.decode()
    assert 'id="run-phase" class="run-phase" hidden' in page


def test_a_pretraining_run_is_not_said_to_prepare_training_examples(researcher_client, researcher):
    run = TrainingRun.objects.create(kind=TrainingRun.Kind.PRETRAIN, owner=researcher, status="running")
    data = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert data["phase_text"].startswith("Pre-training VHRED") and "training examples" not in data["phase_text"]
