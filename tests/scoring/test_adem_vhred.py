"""VHRED pre-training (tiny: a few steps on a small corpus) and ADEM on its encoder."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from scoring.adem import checkpoint
from scoring.adem.vhred.corpus import CorpusError, chitchat_dialogues, file_dialogues
from scoring.adem.vhred.encoder import VhredEncoder
from scoring.adem.vhred.model import VhredConfig
from scoring.adem.vhred.pretrain import pretrain
from scoring.models import AdemModel
from scoring.services.adem import scoring as services_adem_scoring
from scoring.services.adem import vhred_store
from scoring.services.adem.scoring import adem_score
from scoring.services.adem.training import adem_train
from scoring.services.adem.vhred import vhred_pretrain
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

TINY = {
    "vocab_size": 300,
    "embedding": 16,
    "utterance_hidden": 24,
    "context_hidden": 24,
    "latent": 8,
    "decoder_hidden": 24,
    "max_turns": 4,
    "max_tokens": 12,
    "batch_size": 8,
    "kl_anneal_steps": 4,
}


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "dialogues.jsonl"
    dialogues = chitchat_dialogues()[:40]
    path.write_text("\n".join(json.dumps({"turns": d}) for d in dialogues) + "\n")
    return path


def test_chitchat_corpus_joins_each_speakers_messages_into_turns():
    dialogues = chitchat_dialogues()
    assert len(dialogues) > 4000  # 7,168 conversations; about 3,150 were never answered
    assert all(len(d) >= 2 and all(isinstance(t, str) and t for t in d) for d in dialogues[:100])
    assert dialogues[0][0] == "Hello How are you doing today?"


def test_corpus_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('["hi", "hello"]\n{"turns": 3}\n')
    with pytest.raises(CorpusError, match="line 2"):
        file_dialogues(bad)
    text = tmp_path / "c.txt"
    text.write_text("hi\nhello there\n\nhow are you\nfine\nand you\n")
    assert file_dialogues(text) == [["hi", "hello there"], ["how are you", "fine", "and you"]]


def test_pretraining_a_few_steps_checkpoints_and_resumes_where_it_stopped(small_corpus, tmp_path):
    path = tmp_path / "vhred.ckpt"
    dialogues = file_dialogues(small_corpus)
    first = pretrain(dialogues, path, config=VhredConfig.from_dict(TINY), max_steps=3, seed=0)
    assert first["total_steps"] == 3 and first["tokens"] > 0 and first["device"] == "cpu"
    assert np.isfinite(first["loss"])
    assert checkpoint.read_header(path)["config"]["step"] == 3
    second = pretrain(dialogues, path, resume=True, max_steps=2, seed=0)
    assert second["total_steps"] == 5 and second["vocab_size"] == first["vocab_size"]
    encoder = VhredEncoder(path)
    vectors = encoder.encode_contexts([["hi there", "how are you ?"], ["good"]])
    assert vectors.shape == (2, 24) and np.isfinite(vectors).all()
    np.testing.assert_allclose(encoder.encode_texts(["good"]), vectors[1:], atol=1e-5)


def test_a_corrupt_vhred_checkpoint_is_refused(small_corpus, tmp_path):
    path = tmp_path / "vhred.ckpt"
    pretrain(file_dialogues(small_corpus), path, config=VhredConfig.from_dict(TINY), max_steps=1)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(checkpoint.CheckpointError, match="truncated"):
        VhredEncoder(path)


@pytest.mark.django_db
def test_pretrain_command_refuses_resume_without_a_checkpoint(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    with pytest.raises(CommandError, match="nothing to resume"):
        call_command("pretrain_vhred", resume=True)


@pytest.mark.shared_data
@pytest.mark.django_db
def test_adem_trains_on_the_pretrained_vhred_encoder(settings, tmp_path, shared_data, small_corpus, researcher):
    settings.RATELAB_DATA_DIR = tmp_path
    stats = vhred_pretrain(corpus=small_corpus, max_steps=3, config=TINY)
    assert stats["dialogues"] == 40 and vhred_store.checkpoint_path(stats["checkpoint_sha256"]).is_file()
    dataset = _usr_dataset(shared_data, researcher)
    model = adem_train(
        dataset=dataset, name="vh", encoder="vhred", config={"max_epochs": 10, "patience": 10, "pca_dim": 20}
    )
    curve = model.results["curve"]
    assert model.status == "ready" and model.encoder == "vhred"
    assert model.vhred_sha256 == stats["checkpoint_sha256"]
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]


def _usr_dataset(shared_data, owner):
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    dataset = load_dataset_records(records=records, name="usr", owner=owner)
    load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall", owner=owner)
    return dataset


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


TRIPLES = [(["hi , how are you ?", "good , you ?"], "fine thanks", "i am great"), (["do you like dogs ?"], "yes", "no")]


@pytest.mark.shared_data
@pytest.mark.django_db
def test_another_researchers_pretraining_leaves_a_trained_model_scoring_the_same(
    data_dir, shared_data, small_corpus, researcher, other_researcher
):
    """Security review 18.3: B's pretraining replaced the one vhred.ckpt and A's model then failed."""
    mine = vhred_pretrain(corpus=small_corpus, max_steps=3, config=TINY, seed=0, owner=researcher)
    model = adem_train(
        dataset=_usr_dataset(shared_data, researcher),
        name="vh",
        encoder="vhred",
        owner=researcher,
        config={"max_epochs": 3, "patience": 3, "pca_dim": 10},
    )
    before = adem_score(model=model, triples=TRIPLES)
    theirs = vhred_pretrain(corpus=small_corpus, max_steps=3, config=TINY, seed=1, owner=other_researcher)
    resumed = vhred_pretrain(corpus=small_corpus, max_steps=2, resume=True, owner=other_researcher)
    assert len({mine["checkpoint_sha256"], theirs["checkpoint_sha256"], resumed["checkpoint_sha256"]}) == 3
    services_adem_scoring._SCORERS.clear()  # as a fresh worker process would: load everything from disk again
    model.refresh_from_db()
    assert model.vhred_sha256 == mine["checkpoint_sha256"]
    assert vhred_store.checkpoint_path(mine["checkpoint_sha256"]).is_file()
    np.testing.assert_allclose(adem_score(model=model, triples=TRIPLES), before, rtol=1e-5)


@pytest.mark.django_db
def test_unused_vhred_checkpoints_are_collected_and_used_ones_kept(settings, tmp_path, small_corpus, researcher):
    settings.RATELAB_DATA_DIR = tmp_path
    first = vhred_pretrain(corpus=small_corpus, max_steps=1, config=TINY, seed=0, owner=researcher)
    # A model trained on the first checkpoint (its training itself is covered above).
    AdemModel.objects.create(
        name="uses-first", owner=researcher, encoder="vhred", vhred_sha256=first["checkpoint_sha256"]
    )
    second = vhred_pretrain(corpus=small_corpus, max_steps=1, config=TINY, seed=1, owner=researcher)
    third = vhred_pretrain(corpus=small_corpus, max_steps=1, config=TINY, seed=2, owner=researcher)
    assert third["collected"] == [f"{second['checkpoint_sha256']}.ckpt"]  # neither used nor the latest
    assert vhred_store.checkpoint_path(first["checkpoint_sha256"]).is_file()
    assert vhred_store.checkpoint_path(third["checkpoint_sha256"]).is_file()
    assert vhred_store.current_sha(owner=researcher) == third["checkpoint_sha256"]
