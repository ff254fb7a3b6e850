"""The pre-trained VHRED hierarchical encoder as an ADEM encoder.

A context is encoded as the context-RNN state after its last turn (up to `max_turns` turns);
a reference or response as the state after reading it as a one-turn dialogue, so all three
live in the same space, as in the paper.
"""

import numpy as np
import torch

from scoring.adem.checkpoint import read_header
from scoring.adem.vhred.model import batch_tensors
from scoring.adem.vhred.pretrain import default_device, load
from scoring.adem.vhred.tokenizer import encode_turns


class VhredEncoder:
    def __init__(self, checkpoint, device=None, batch_size=64):
        self.device = device or default_device()
        model, self.tokenizer, self.config, _, _ = load(checkpoint, self.device)
        self.encoder = model.encoder.eval()
        self.dim = self.config.context_hidden
        self.batch_size = batch_size
        # The weights' hash names the encoder, so vectors cached for older weights are never reused.
        self.id = f"vhred/{read_header(checkpoint)['sha256'][:16]}"

    def encode_contexts(self, contexts):
        out = np.zeros((len(contexts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(contexts), self.batch_size):
                chunk = contexts[start : start + self.batch_size]
                dialogues = [
                    encode_turns(
                        self.tokenizer, (list(turns) or [""])[-self.config.max_turns :], self.config.max_tokens
                    )
                    for turns in chunk
                ]
                tokens, lengths, counts = batch_tensors(dialogues, self.device)
                _, states = self.encoder(tokens, lengths, counts)
                last = states[torch.arange(len(chunk)), counts.to(states.device) - 1]
                out[start : start + len(chunk)] = last.float().cpu().numpy()
        return out

    def encode_texts(self, texts):
        return self.encode_contexts([[text] for text in texts])
