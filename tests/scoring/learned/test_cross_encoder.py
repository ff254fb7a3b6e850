"""The cross-encoder kind on a tiny model (first transformer layer only, short inputs, few epochs)."""

import numpy as np
import pytest
import torch

from scoring.adem import checkpoint
from scoring.adem.checkpoint import CheckpointError
from scoring.adem.encoders import minilm
from scoring.learned import crossfit
from scoring.learned.cross_encoder import frozen_states, inputs, network
from scoring.learned.cross_encoder.trainer import DEFAULTS, CrossEncoder, fingerprint, load
from scoring.learned.data import Response
from tests.scoring.learned.generated import rated_set

pytestmark = pytest.mark.slow  # a few tiny fine-tunings: ~20 s on a quiet 2-core machine, minutes under load

TINY = {
    "layers": 1,
    "max_length": 32,
    "response_tokens": 10,
    "reference_tokens": 6,
    "max_epochs": 2,
    "patience": 1,
    "batch_size": 4,
    "lr": 1e-4,
    # The tests below compare scores to 1e-5, which holds in float32 on every CPU; `auto` (bfloat16
    # where the CPU has it) is tested on its own at the end.
    "scoring_precision": "float32",
}


@pytest.fixture(scope="module")
def rated():
    return rated_set(contexts=8, per_context=2, seed=11, features=False)


@pytest.fixture(scope="module")
def two_runs(rated):
    return [crossfit.cross_validate("cross-encoder", rated, folds=2, seed=4, config=TINY) for _ in range(2)]


def test_the_same_run_twice_gives_the_same_model_and_figures(two_runs):
    (first_model, first), (second_model, second) = two_runs
    np.testing.assert_array_equal(
        [p["predicted"] for p in first["predictions"]], [p["predicted"] for p in second["predictions"]]
    )
    assert first["test"]["spearman"] == second["test"]["spearman"]
    assert fingerprint(first_model) == fingerprint(second_model)


def test_training_reports_each_epoch_and_puts_torch_back_as_it_was(rated):
    torch.use_deterministic_algorithms(False)
    threads = torch.get_num_threads()
    points = []
    model = CrossEncoder({**TINY, "patience": 5})
    report = model.fit(rated[:12], rated[12:], seed=0, progress=lambda *point: points.append(point))
    assert [p[0] for p in points] == [1, 2] == [c["epoch"] for c in report.curve]
    assert report.best_epoch in (1, 2)
    assert all(np.isfinite(p[1]) and -1 <= p[2] <= 1 for p in points)
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == threads


def test_a_saved_model_scores_new_responses_in_batches_as_before(two_runs, tmp_path):
    model = two_runs[0][0]
    new = [
        Response(context=("how was the trip?",), response="great" + " fun" * k, reference="it was fine")
        for k in range(30)
    ]
    before = model.predict(new)
    model.save(tmp_path / "ce.ckpt", extra={"name": "tiny"})
    again = load(tmp_path / "ce.ckpt")
    np.testing.assert_allclose(again.predict(new), before, rtol=0, atol=1e-6)
    # Small token budgets give many batches, and batching does not change a score.
    small = load(tmp_path / "ce.ckpt")
    small.config["score_batch_tokens"] = 40
    np.testing.assert_allclose(small.predict(new), before, rtol=0, atol=1e-5)


def test_a_checkpoint_from_other_base_weights_is_refused(two_runs, tmp_path, monkeypatch):
    two_runs[0][0].save(tmp_path / "ce.ckpt")
    monkeypatch.setattr("scoring.learned.cross_encoder.trainer.source_digest", lambda path: "0" * 64)
    with pytest.raises(CheckpointError, match="other all-MiniLM-L6-v2 weights"):
        load(tmp_path / "ce.ckpt")


def test_inputs_keep_the_latest_context_and_the_reference_only_when_asked():
    tok = inputs.tokenizer()
    long_context = (*tuple(f"turn {i} about apples" for i in range(30)), "the last turn mentions zebras")
    row = Response(context=long_context, response="a reply", reference="the gold answer")
    ((ids, types),) = inputs.encode([row], max_length=24, response_tokens=8, reference_tokens=4, use_reference=True)
    text = tok.decode(ids)
    assert len(ids) == len(types) <= 24
    assert "zebras" in text and "turn 0 " not in text
    assert "the gold answer" in text and "a reply" in text
    assert types[0] == 0 and types[-1] == 1
    ((plain, _),) = inputs.encode([row], max_length=24, response_tokens=8, reference_tokens=4, use_reference=False)
    assert "gold" not in tok.decode(plain)
    ((no_reference, _),) = inputs.encode(
        [Response(context=("hi",), response="a reply")],
        max_length=24,
        response_tokens=8,
        reference_tokens=4,
        use_reference=True,
    )
    assert tok.decode(no_reference).count("[SEP]") == 2


def _batch(texts):
    responses = [Response(context=("hello there", "how was the trip?"), response=t, reference="fine") for t in texts]
    encoded = inputs.encode(responses, max_length=32, response_tokens=12, reference_tokens=4, use_reference=True)
    return encoded, network.pad(encoded, inputs.tokenizer().pad_token_id)


def test_the_split_network_computes_what_the_encoder_computes():
    model = network.build(layers=2, frozen_layers=1).eval()
    encoded, (ids, mask, types) = _batch(["great", "it rained every single day, but the food was good"])
    with torch.no_grad():
        hidden = model.encoder(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        weights = mask.unsqueeze(-1).float()
        expected = model.head((hidden * weights).sum(1) / weights.sum(1)).squeeze(-1)
        np.testing.assert_allclose(model(ids, mask, types).numpy(), expected.numpy(), rtol=0, atol=1e-6)
        # Bottom states cached per sequence (in any batching) and padded again give the same scores.
        states = network.bottom_states(model, [encoded[1:], encoded[:1]], inputs.tokenizer().pad_token_id)
        again = model.top(*network.pad_states([states[1], states[0]]))
    np.testing.assert_allclose(again.numpy(), expected.numpy(), rtol=0, atol=1e-5)
    assert [len(s) for s in states] == [len(encoded[1][0]), len(encoded[0][0])]


def test_frozen_layers_stay_as_packaged_and_the_rest_trains(rated):
    model = CrossEncoder({**TINY, "layers": 2, "frozen_layers": 1, "max_epochs": 1})
    model.fit(rated[:12], rated[12:], seed=0)
    packaged = network.build(layers=2, frozen_layers=1).state_dict()
    trained = model.model.state_dict()
    frozen = ("encoder.embeddings.", "encoder.encoder.layer.0.")
    unused = ("encoder.pooler.", "head.")  # the pooler is never read; the head starts at random
    for name, value in trained.items():
        if not name.startswith(unused):
            assert torch.equal(value, packaged[name]) == name.startswith(frozen), name


def test_the_validation_rows_are_scored_from_cached_states_as_predict_scores_them(rated):
    # Validation rows are scored after every epoch: their frozen layers' states are computed once.
    model = CrossEncoder({**TINY, "layers": 2, "frozen_layers": 1, "max_epochs": 1})
    model.fit(rated[:12], rated[12:], seed=0)
    val = rated[12:]
    repeated = model._repeated_predictor(val, inputs.tokenizer().pad_token_id)
    np.testing.assert_allclose(repeated(), model.predict(val), rtol=0, atol=1e-5)
    model.model.train()  # as after a training epoch: the cached scoring must switch dropout off itself
    np.testing.assert_allclose(repeated(), model.predict(val), rtol=0, atol=1e-5)


def test_attention_dropout_is_the_configured_one_in_every_layer():
    assert {layer.attention.self.dropout.p for layer in network.build(layers=2).encoder.encoder.layer} == {0.1}
    quiet = network.build(layers=2, attention_dropout=0.0)
    assert {layer.attention.self.dropout.p for layer in quiet.encoder.encoder.layer} == {0.0}
    quiet.train()
    _, batch = _batch(["great", "it rained every single day, but the food was good"])
    torch.manual_seed(0)
    first = quiet.top(quiet.bottom(*batch), batch[1])
    torch.manual_seed(1)
    second = quiet.top(quiet.bottom(*batch), batch[1])
    assert not torch.equal(first, second)  # the hidden states' own dropout still draws in training


def test_frozen_states_are_computed_once_per_sequence_and_the_memo_is_bounded(monkeypatch):
    model = network.build(layers=2, frozen_layers=1).eval()
    pad_id = inputs.tokenizer().pad_token_id
    encoded, _ = _batch(["great", "it rained every single day", "we swam", "the food was good"])
    computed = []
    real = network.bottom_states

    def counting(model_, batches, pad_id_):
        computed.extend(len(ids) for batch in batches for ids, _ in batch)
        return real(model_, batches, pad_id_)

    monkeypatch.setattr(network, "bottom_states", counting)
    frozen_states.forget()
    first = frozen_states.states(model, encoded[:3], pad_id, max_tokens=2048)
    assert len(computed) == 3
    again = frozen_states.states(model, [encoded[3], encoded[1], encoded[0]], pad_id, max_tokens=2048)
    assert len(computed) == 4  # only the new sequence
    assert again[1] is first[1] and again[2] is first[0]
    # Kept states give the scores fresh ones give (the same arithmetic, to rounding).
    with torch.no_grad():
        fresh = model.top(*network.pad_states(real(model, [encoded], pad_id)))
        kept = model.top(*network.pad_states(frozen_states.states(model, encoded, pad_id, max_tokens=2048)))
    np.testing.assert_allclose(kept.numpy(), fresh.numpy(), rtol=0, atol=1e-5)
    monkeypatch.setattr(frozen_states, "MAX_TOKENS", len(encoded[0][0]) + len(encoded[1][0]))
    frozen_states.forget()
    frozen_states.states(model, encoded, pad_id, max_tokens=2048)  # four stored, the oldest forgotten
    assert frozen_states._SIZE["tokens"] <= frozen_states.MAX_TOKENS and len(frozen_states._MEMO) < 4
    frozen_states.forget()
    assert frozen_states._SIZE["tokens"] == 0 and not frozen_states._MEMO


def test_a_fit_scores_the_same_with_its_frozen_states_kept_or_computed_afresh(rated):
    frozen_states.forget()
    model = CrossEncoder({**TINY, "layers": 2, "frozen_layers": 1, "max_epochs": 1})
    model.fit(rated[:12], rated[12:], seed=0)
    assert frozen_states._MEMO  # the fit kept its rows' states
    kept = model.predict(rated)
    frozen_states.forget()
    np.testing.assert_allclose(model.predict(rated), kept, rtol=0, atol=1e-5)
    assert not frozen_states._MEMO  # scoring reads kept states but keeps none


def test_a_cross_validation_drops_the_states_it_kept_when_it_ends(rated, monkeypatch):
    sizes = []
    real_fit = CrossEncoder.fit

    def fit(self, train, val, **kwargs):
        report = real_fit(self, train, val, **kwargs)
        sizes.append(len(frozen_states._MEMO))
        return report

    monkeypatch.setattr(CrossEncoder, "fit", fit)
    crossfit.cross_validate("cross-encoder", rated, folds=2, seed=0, config={**TINY, "max_epochs": 1})
    assert sizes[0] > 0 and sizes[-1] >= sizes[0]  # the folds and the refit shared them
    assert not frozen_states._MEMO and frozen_states._SIZE["tokens"] == 0


def test_auto_scores_in_bfloat16_where_the_cpu_has_it_and_trains_in_float32(rated, monkeypatch, tmp_path):
    assert DEFAULTS["scoring_precision"] == "auto"
    assert CrossEncoder({}).scores_in_bfloat16() == minilm.native_bfloat16("cpu")
    monkeypatch.setattr(minilm, "native_bfloat16", lambda device: True)  # as on such a CPU, whatever runs this
    config = {**TINY, "layers": 2, "frozen_layers": 1, "max_epochs": 2}
    auto = CrossEncoder({**config, "scoring_precision": "auto"})
    exact = CrossEncoder(config)
    # Training is float32 either way: the same seed gives the same weights and the same curve.
    assert auto.fit(rated[:12], rated[12:], seed=0).curve == exact.fit(rated[:12], rated[12:], seed=0).curve
    assert fingerprint(auto) == fingerprint(exact)
    frozen_states.forget()  # score from states computed in the scoring's own precision
    fast, float32 = auto.predict(rated), exact.predict(rated)
    assert not np.allclose(fast, float32, rtol=0, atol=1e-6)  # bfloat16 products did run
    np.testing.assert_allclose(fast, float32, rtol=0, atol=0.02 * np.ptp(float32) + 1e-3)
    # The setting is saved with the model; one saved before it existed scores in float32.
    auto.save(tmp_path / "auto.ckpt")
    assert load(tmp_path / "auto.ckpt").scores_in_bfloat16()
    config_, tensors = checkpoint.load(tmp_path / "auto.ckpt", kind="learned-cross-encoder")
    del config_["config"]["scoring_precision"]
    checkpoint.save(tmp_path / "old.ckpt", kind="learned-cross-encoder", config=config_, tensors=tensors)
    old = load(tmp_path / "old.ckpt")
    assert old.config["scoring_precision"] == "float32" and not old.scores_in_bfloat16()
    np.testing.assert_allclose(old.predict(rated), float32, rtol=0, atol=1e-5)


def test_an_unknown_scoring_precision_is_refused_before_any_fit():
    with pytest.raises(ValueError, match="scoring_precision must be one of auto, float32, not 'int8'"):
        crossfit.checked_config("cross-encoder", {"scoring_precision": "int8"})
