"""VHRED pre-training: BPE tokeniser on the corpus, then the model, checkpointed and resumable.

The checkpoint holds the model, the optimiser, the tokeniser (as JSON in the header config),
and where training stopped (epoch, batch, step); `resume=True` continues from there, with the
same batch order (shuffled by seed + epoch). Runs on CUDA when present.
"""

import time

import numpy as np
import torch

from scoring.adem import checkpoint
from scoring.adem.vhred.model import Vhred, VhredConfig, batch_tensors
from scoring.adem.vhred.tokenizer import encode_turns, from_json, train_bpe

CHECKPOINT_KIND = "vhred"


def default_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def _windows(dialogues, tokenizer, config):
    """Each dialogue cut into windows of at most `max_turns` turns, tokenised."""
    out = []
    for dialogue in dialogues:
        ids = encode_turns(tokenizer, dialogue, config.max_tokens)
        for start in range(0, max(1, len(ids) - 1), config.max_turns - 1):
            window = ids[start : start + config.max_turns]
            if len(window) >= 2:
                out.append(window)
    return out


def load(path, device=None):
    """(model, tokenizer, config, state dict of the run) from a VHRED checkpoint."""
    header_config, tensors = checkpoint.load(path, kind=CHECKPOINT_KIND)
    try:
        config = VhredConfig.from_dict(header_config["model"])
        tokenizer = from_json(header_config["tokenizer"])
        model = Vhred(config)
        model.load_state_dict(tensors["model"], strict=True)
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise checkpoint.CheckpointError(f"{path} does not match this VHRED model ({error})") from error
    return model.to(device or default_device()), tokenizer, config, header_config, tensors


def pretrain(
    dialogues,
    path,
    *,
    config=None,
    epochs=1,
    resume=False,
    max_steps=None,
    seed=0,
    device=None,
    progress=None,
    save_every=200,
):
    """Train (or continue) VHRED on `dialogues` and checkpoint to `path`. Returns throughput stats.

    `progress(epoch, step, loss, kl_weight)` is called every 20 steps. `max_steps` stops early
    (tests, benchmarks); the checkpoint then records where to resume.
    """
    device = device or default_device()
    torch.manual_seed(seed)
    if resume and path.is_file():
        model, tokenizer, config, state, tensors = load(path, device)
        optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
        optimiser.load_state_dict(tensors["optimiser"])
        epoch, batch_index, step = state["epoch"], state["batch"], state["step"]
    else:
        config = config or VhredConfig()
        tokenizer = train_bpe(dialogues, vocab_size=config.vocab_size)
        config.vocab_size = tokenizer.get_vocab_size()
        model = Vhred(config).to(device)
        optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
        epoch, batch_index, step = 0, 0, 0
    windows = _windows(dialogues, tokenizer, config)
    n_batches = (len(windows) + config.batch_size - 1) // config.batch_size
    tokens_seen, started, last_loss, steps_now = 0, time.perf_counter(), float("nan"), 0

    def save():
        checkpoint.save(
            path,
            kind=CHECKPOINT_KIND,
            config={
                "model": config.as_dict(),
                "tokenizer": tokenizer.to_str(),
                "epoch": epoch,
                "batch": batch_index,
                "step": step,
                "loss": last_loss,
            },
            tensors={"model": model.state_dict(), "optimiser": optimiser.state_dict()},
        )

    model.train()
    while epoch < epochs and (max_steps is None or steps_now < max_steps):
        order = np.random.default_rng(seed + epoch).permutation(len(windows))
        while batch_index < n_batches and (max_steps is None or steps_now < max_steps):
            rows = order[batch_index * config.batch_size : (batch_index + 1) * config.batch_size]
            tokens, lengths, counts = batch_tensors([windows[i] for i in rows], device)
            kl_weight = min(1.0, step / max(1, config.kl_anneal_steps))
            loss, _, _, _n_tokens = model(tokens, lengths, counts, kl_weight)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            last_loss = loss.item()
            tokens_seen += int(lengths.sum())
            batch_index += 1
            step += 1
            steps_now += 1
            if progress is not None and step % 20 == 0:
                progress(epoch + 1, step, last_loss, kl_weight)
            if step % save_every == 0:
                save()
        if batch_index >= n_batches:
            epoch, batch_index = epoch + 1, 0
    save()
    seconds = time.perf_counter() - started
    return {
        "steps": steps_now,
        "total_steps": step,
        "epoch": epoch,
        "tokens": tokens_seen,
        "seconds": seconds,
        "tokens_per_second": tokens_seen / seconds if seconds > 0 else None,
        "loss": last_loss,
        "device": str(device),
        "windows": len(windows),
        "vocab_size": config.vocab_size,
    }
