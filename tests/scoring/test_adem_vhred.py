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
from scoring.services_adem import adem_train, vhred_checkpoint_path, vhred_pretrain
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
def test_adem_trains_on_the_pretrained_vhred_encoder(settings, tmp_path, shared_data, small_corpus):
    settings.RATELAB_DATA_DIR = tmp_path
    stats = vhred_pretrain(corpus=small_corpus, max_steps=3, config=TINY)
    assert stats["dialogues"] == 40 and vhred_checkpoint_path().is_file()
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    dataset = load_dataset_records(records=records, name="usr", owner=None)
    load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall")
    model = adem_train(
        dataset=dataset, name="vh", encoder="vhred", config={"max_epochs": 10, "patience": 10, "pca_dim": 20}
    )
    curve = model.results["curve"]
    assert model.status == "ready" and model.encoder == "vhred"
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]
