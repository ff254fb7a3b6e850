"""ADEM's pure parts (no database): splits, debiasing, checkpoints, and training on shared data."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from scoring.adem import checkpoint
from scoring.adem.cache import VectorCache, encode
from scoring.adem.debias import debias_indices, length_bins
from scoring.adem.encoders.glove import GloveEncoder
from scoring.adem.encoders.minilm import MiniLmEncoder, token_batches
from scoring.adem.model import Adem, fit_alpha_beta
from scoring.adem.pipeline import Scorer, encode_examples, train_and_evaluate
from scoring.adem.splits import kfold_by_context, split_by_context
from scoring.adem.training import TrainConfig
from tests.conftest import SHARED_DATA
from tests.scoring.adem_helpers import examples_from_records
from tests.shared_loaders import grade, usr_personachat

GLOVE = ("glove", GloveEncoder.id)


@pytest.fixture(scope="module")
def usr_glove():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    shared = SHARED_DATA
    examples = examples_from_records(*usr_personachat(shared, include_ground_truth=False))
    return examples, encode_examples(examples, GloveEncoder())


def test_split_by_context_puts_no_context_in_two_parts():
    contexts = [f"c{i // 4}" for i in range(200)]
    train, val, test = split_by_context(contexts, seed=3)
    parts = [{contexts[i] for i in part} for part in (train, val, test)]
    assert parts[0].isdisjoint(parts[1]) and parts[0].isdisjoint(parts[2]) and parts[1].isdisjoint(parts[2])
    assert sorted(np.concatenate([train, val, test]).tolist()) == list(range(200))
    assert (len(parts[0]), len(parts[1]), len(parts[2])) == (34, 8, 8)


def test_split_by_context_is_reproducible_with_a_seed_and_changes_with_another():
    contexts = [f"c{i}" for i in range(60)]
    first = split_by_context(contexts, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(first, split_by_context(contexts, seed=1), strict=True))
    assert not np.array_equal(first[2], split_by_context(contexts, seed=2)[2])


def test_kfold_by_context_tests_every_example_exactly_once_and_never_on_a_seen_context():
    contexts = [f"c{i // 5}" for i in range(150)]
    tested = []
    for train, val, test in kfold_by_context(contexts, k=5, seed=0):
        seen = {contexts[i] for i in np.concatenate([train, val])}
        assert seen.isdisjoint({contexts[i] for i in test})
        assert {contexts[i] for i in train}.isdisjoint({contexts[i] for i in val})
        tested.extend(test.tolist())
    assert sorted(tested) == list(range(150))


def test_kfold_refuses_more_folds_than_contexts():
    with pytest.raises(ValueError, match="between 2 and the number of contexts"):
        kfold_by_context(["a", "b", "c"], k=4)


def test_length_debiasing_balances_length_bins_within_each_score():
    rng = np.random.default_rng(0)
    scores = rng.integers(1, 4, size=300)
    lengths = rng.integers(1, 40, size=300) + (scores == 3) * rng.integers(0, 40, size=300)
    idx = debias_indices(lengths, scores, seed=0, n_bins=4)
    assert set(idx.tolist()) == set(range(300))  # nothing dropped, only repeated
    bins = length_bins(lengths, 4)
    for score in (1, 2, 3):
        counts = np.bincount(bins[idx][scores[idx] == score], minlength=4)
        occupied = counts[np.bincount(bins[scores == score], minlength=4) > 0]
        assert occupied.min() == occupied.max() > 0


def test_alpha_beta_map_initial_predictions_onto_the_rating_scale():
    raw = np.linspace(-3.0, 7.0, 101)
    alpha, beta = fit_alpha_beta(raw, 1, 5)
    scaled = (raw - alpha) / beta
    assert np.percentile(scaled, 2) == pytest.approx(1.0) and np.percentile(scaled, 98) == pytest.approx(5.0)


def test_adem_variants_use_only_their_terms():
    c, r, rh = torch.eye(3)[[0]], torch.eye(3)[[1]], torch.tensor([[1.0, 2.0, 0.0]])
    assert Adem(3, "full").raw(c, r, rh).item() == pytest.approx(3.0)
    assert Adem(3, "context").raw(c, r, rh).item() == pytest.approx(1.0)
    assert Adem(3, "reference").raw(c, r, rh).item() == pytest.approx(2.0)
    with pytest.raises(ValueError, match="unknown ADEM variant"):
        Adem(3, "both")


def test_vector_cache_reencodes_nothing_on_the_second_pass(tmp_path):
    class Counting(GloveEncoder):
        calls = 0

        def encode_texts(self, texts):
            Counting.calls += len(texts)
            return super().encode_texts(texts)

    cache = VectorCache(tmp_path / "v.sqlite")
    texts = ["hello there", "how are you ?", "hello there"]
    first = encode(Counting(), texts, kind="text", cache=cache)
    second = encode(Counting(), texts, kind="text", cache=cache)
    assert Counting.calls == 2
    np.testing.assert_array_equal(first, second)
    assert cache.count(GloveEncoder.id) == 2


@pytest.mark.shared_data
@pytest.mark.parametrize("variant", ["full", "context", "reference"])
def test_training_each_variant_on_usr_personachat_lowers_the_training_loss(usr_glove, variant):
    examples, vectors = usr_glove
    config = TrainConfig(variant=variant, max_epochs=15, patience=15)
    scorer, results = train_and_evaluate(examples, vectors, config, seed=0, encoder=GLOVE)
    curve = results["curve"]
    assert len(curve) == 15
    assert curve[-1]["train_loss"] < curve[0]["train_loss"] * 0.9
    assert results["test"]["n"] == results["split"]["test"] > 0
    assert scorer.model.variant == variant


@pytest.mark.shared_data
def test_training_is_reproducible_with_a_fixed_seed(usr_glove):
    examples, vectors = usr_glove
    runs = [
        train_and_evaluate(examples, vectors, TrainConfig(max_epochs=5), seed=7, encoder=GLOVE)[1] for _ in range(2)
    ]
    assert runs[0]["test"] == runs[1]["test"]


@pytest.mark.shared_data
def test_kfold_pooled_predictions_cover_each_rated_response_once(usr_glove):
    examples, vectors = usr_glove
    _, results = train_and_evaluate(examples, vectors, TrainConfig(max_epochs=5), seed=0, encoder=GLOVE, folds=4)
    assert results["test"]["n"] == len(examples) == 240
    keys = [(p["context_id"], p["system"]) for p in results["predictions"]]
    assert sorted(keys) == sorted((e.context_id, e.system) for e in examples)
    assert len(set(keys)) == 240


@pytest.mark.shared_data
def test_checkpoint_round_trip_gives_identical_scores(usr_glove, tmp_path):
    examples, vectors = usr_glove
    scorer, _ = train_and_evaluate(examples, vectors, TrainConfig(max_epochs=5), seed=0, encoder=GLOVE)
    scorer.save(tmp_path / "m.ckpt")
    loaded = Scorer.load(tmp_path / "m.ckpt")
    triples = [(e.context, e.reference, e.response) for e in examples[:20]]
    np.testing.assert_allclose(loaded.score(triples, GloveEncoder()), scorer.score(triples, GloveEncoder()))
    assert loaded.config.variant == "full" and loaded.encoder_id == GloveEncoder.id


def _saved(tmp_path):
    path = tmp_path / "m.ckpt"
    checkpoint.save(path, kind="adem", config={"dim": 2}, tensors={"w": np.eye(2, dtype=np.float32)})
    return path


def test_corrupt_checkpoint_is_refused(tmp_path):
    path = _saved(tmp_path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(checkpoint.CheckpointError, match="corrupt: sha256"):
        checkpoint.load(path, kind="adem")


def test_truncated_checkpoint_is_refused(tmp_path):
    path = _saved(tmp_path)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(checkpoint.CheckpointError, match="truncated"):
        checkpoint.load(path, kind="adem")


def test_checkpoints_saved_to_one_path_at_once_leave_one_whole_file_and_no_temporaries(tmp_path):
    """Two workers on a fresh machine train the shared next-utterance heads together and both save
    them: each save is whole or not there, never a mix of the two."""
    path, writers = tmp_path / "shared.ckpt", 6
    start = threading.Barrier(writers)
    weights = [np.full((256, 1024), i, dtype=np.float32) for i in range(writers)]  # 1 MiB apiece

    def save(i):
        start.wait()
        return checkpoint.save(path, kind="adem", config={"writer": i}, tensors={"w": weights[i]})

    with ThreadPoolExecutor(writers) as pool:
        digests = list(pool.map(save, range(writers)))
    config, tensors = checkpoint.load(path, kind="adem")
    assert digests[config["writer"]] == checkpoint.read_header(path)["sha256"]
    assert np.array_equal(tensors["w"].numpy(), weights[config["writer"]])
    assert [p.name for p in tmp_path.iterdir()] == ["shared.ckpt"]


def test_checkpoint_of_another_format_version_or_kind_is_refused(tmp_path):
    path = _saved(tmp_path)
    with pytest.raises(checkpoint.CheckpointError, match="not a 'vhred' checkpoint"):
        checkpoint.load(path, kind="vhred")
    path.write_bytes(path.read_bytes().replace(b'"format_version": 1', b'"format_version": 9'))
    with pytest.raises(checkpoint.CheckpointError, match="format version 9"):
        checkpoint.load(path, kind="adem")
    (tmp_path / "x.ckpt").write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(checkpoint.CheckpointError, match="not a RateLab checkpoint"):
        checkpoint.load(tmp_path / "x.ckpt", kind="adem")


def test_checkpoint_with_mismatched_tensors_is_refused_not_half_loaded(tmp_path):
    path = tmp_path / "bad.ckpt"
    checkpoint.save(
        path,
        kind="adem",
        config={"train": {"variant": "full"}, "encoder": "glove", "encoder_id": GloveEncoder.id, "dim": 4},
        tensors={"pca.mean": np.zeros(50), "pca.components": np.zeros((4, 50)), "model.M": np.eye(3)},
    )
    with pytest.raises(checkpoint.CheckpointError, match="does not match this ADEM model"):
        Scorer.load(path)


@pytest.mark.shared_data
@pytest.mark.parametrize("corpus", ["dailydialog", "empatheticdialogues"])
def test_minilm_adem_trains_on_a_grade_sample(shared_data, corpus):
    examples = examples_from_records(*grade(shared_data, corpus))[:120]
    vectors = encode_examples(examples, MiniLmEncoder())
    assert vectors.rh.shape == (120, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors.rh, axis=1), 1.0, atol=1e-4)
    _, results = train_and_evaluate(
        examples, vectors, TrainConfig(max_epochs=8, patience=8), seed=0, encoder=("minilm", MiniLmEncoder.id)
    )
    assert results["curve"][-1]["train_loss"] < results["curve"][0]["train_loss"]
    assert results["test"]["n"] == results["split"]["test"]


def test_minilm_bfloat16_vectors_agree_with_float32():
    texts = ["hello there, how are you?", "i love hiking in the mountains", "what? <b>no</b> way!!", "ok"]
    exact = MiniLmEncoder(precision="float32").encode_texts(texts)
    fast = MiniLmEncoder(precision="bfloat16").encode_texts(texts)
    cosine = (exact * fast).sum(axis=1)
    assert cosine.min() > 0.999
    # Different texts stay different: the agreement is not an artefact of collapsed vectors.
    assert (exact @ exact.T)[0, 1] < 0.9


def test_minilm_long_texts_keep_their_most_recent_tokens():
    encoder = MiniLmEncoder(precision="float32", max_length=32)
    ending = "so what do you think about the new library downtown? " * 3  # longer than 32 tokens
    first, second, other = encoder.encode_texts(
        ["apples " * 60 + ending, "oranges and pears " * 40 + ending, ending + " apples" * 60]
    )
    assert float(first @ second) > 0.9999  # only the cut-off starts differ
    assert float(first @ other) < 0.99


def test_minilm_batches_group_similar_lengths_within_the_token_budget():
    lengths = [5, 120, 7, 6, 64, 30, 128, 9, 31, 8]
    batches = token_batches(lengths, max_tokens=100, max_texts=3)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        # A text longer than the budget still goes, alone.
        assert len(batch) * max(lengths[i] for i in batch) <= 100 or len(batch) == 1
    assert [lengths[i] for batch in batches for i in batch] == sorted(lengths)


def test_minilm_vectors_do_not_depend_on_batching():
    texts = ["ok", "hello there, how are you?", "i love hiking in the mountains " * 8, "what? no way!!", "yes " * 50]
    batched = MiniLmEncoder(precision="float32").encode_texts(texts)
    alone = MiniLmEncoder(precision="float32", batch_size=1).encode_texts(texts)
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    assert MiniLmEncoder(precision="float32").encode_texts([]).shape == (0, 384)


def test_minilm_torch_int8_vectors_have_their_own_id_and_stay_close_to_float32():
    # The ONNX Runtime int8 route (precision "int8") is tested in test_adem_onnx.py.
    texts = ["hello there, how are you?", "i love hiking in the mountains", "what? <b>no</b> way!!", "ok"]
    int8 = MiniLmEncoder(precision="int8-torch")
    assert int8.id != MiniLmEncoder.id  # a cache or a model never mixes them with float32 vectors
    assert MiniLmEncoder(precision="float32").id == MiniLmEncoder(precision="bfloat16").id == MiniLmEncoder.id
    exact = MiniLmEncoder(precision="float32").encode_texts(texts)
    cosine = (exact * int8.encode_texts(texts)).sum(axis=1)
    assert cosine.min() > 0.8
    with pytest.raises(ValueError, match="CPU only"):
        MiniLmEncoder(device="cuda", precision="int8-torch")


def test_minilm_rejects_an_unknown_precision():
    with pytest.raises(ValueError, match="unknown precision 'half'"):
        MiniLmEncoder(precision="half")
