"""MiniLM's int8 route through ONNX Runtime: agreement with float32 torch, and the export file's life."""

import numpy as np
import pytest

from scoring.adem.encoders import get_encoder, onnx_minilm
from scoring.adem.encoders.minilm import BASE_ID, MiniLmEncoder, model_dir

TEXTS = [
    "hello there, how are you?",
    "i love hiking in the mountains",
    "what? <b>no</b> way!!",
    "do you have any pets? i have two cats and a very old dog",
    "my favourite food is pizza with extra cheese",
    "i work as a nurse in a small hospital near the coast",
    "that sounds lovely , i have never been to the sea",
    "so what do you think about the new library downtown? " * 4,
]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def float32_vectors():
    return MiniLmEncoder(precision="float32").encode_texts(TEXTS)


@pytest.fixture(scope="module")
def int8_vectors(export_dir):
    return MiniLmEncoder(precision="int8", export_dir=export_dir).encode_texts(TEXTS)


def _export(directory):
    return onnx_minilm.export_path(directory, model_dir())


def test_int8_vectors_stay_close_to_float32_torch_vectors(float32_vectors, int8_vectors):
    cosine = (float32_vectors * int8_vectors).sum(axis=1)
    assert cosine.mean() > 0.97 and cosine.min() > 0.94
    np.testing.assert_allclose(np.linalg.norm(int8_vectors, axis=1), 1.0, atol=1e-4)
    # Different texts stay different: the agreement is not an artefact of collapsed vectors.
    assert (int8_vectors @ int8_vectors.T)[0, 1] < 0.9


def test_int8_vectors_have_an_id_of_their_own():
    ids = {MiniLmEncoder(precision=p).id for p in ("float32", "int8", "int8-torch")}
    assert len(ids) == 3  # a cache or a model never mixes them
    assert MiniLmEncoder(precision="float32").id == BASE_ID == MiniLmEncoder.id
    assert MiniLmEncoder(precision="int8").device == "cpu"  # even where a GPU is present
    with pytest.raises(ValueError, match="CPU only"):
        MiniLmEncoder(device="cuda", precision="int8")


def test_only_minilm_takes_a_precision():
    assert get_encoder("minilm", precision="int8").id == MiniLmEncoder(precision="int8").id
    with pytest.raises(ValueError, match="minilm encoder only"):
        get_encoder("glove", precision="int8")


def test_the_export_is_built_once_and_then_reused(export_dir, int8_vectors, monkeypatch):
    path = _export(export_dir)
    assert onnx_minilm.is_valid(path)
    onnx_minilm._SESSIONS.clear()  # as a new process would start

    def no_rebuild(*args, **kwargs):
        raise AssertionError("a valid export was rebuilt")

    monkeypatch.setattr(onnx_minilm, "build", no_rebuild)
    again = MiniLmEncoder(precision="int8", export_dir=export_dir).encode_texts(TEXTS)
    np.testing.assert_array_equal(again, int8_vectors)


def test_a_damaged_or_unfinished_export_is_not_valid(export_dir, int8_vectors, tmp_path):
    good = _export(export_dir)
    copy = tmp_path / good.name
    sidecar = copy.with_name(copy.name + ".sha256")
    copy.write_bytes(good.read_bytes())
    assert not onnx_minilm.is_valid(copy)  # no digest yet: the export was cut short
    sidecar.write_text(onnx_minilm.file_sha256(good))
    assert onnx_minilm.is_valid(copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the weights
    copy.write_bytes(bytes(data))
    assert not onnx_minilm.is_valid(copy)
    assert not onnx_minilm.is_valid(tmp_path / "missing.onnx")


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_corrupt_export_is_rebuilt(tmp_path, damage, int8_vectors):
    encoder = MiniLmEncoder(precision="int8", export_dir=tmp_path)
    path = _export(tmp_path)
    if damage == "truncated":
        path.write_bytes(b"\x08\x07")
        path.with_name(path.name + ".sha256").write_text("0" * 64)
    onnx_minilm._SESSIONS.clear()
    vectors = encoder.encode_texts(TEXTS)
    assert onnx_minilm.is_valid(path)
    np.testing.assert_allclose(vectors, int8_vectors, atol=1e-5)
