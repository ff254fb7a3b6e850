"""VHRED: hierarchical encoder (utterance GRU → context GRU, layer norm), a latent variable per
turn, and a GRU decoder (Serban et al. 2017). ADEM keeps only the encoder."""

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


@dataclass
class VhredConfig:
    vocab_size: int = 8000
    embedding: int = 128
    utterance_hidden: int = 256
    context_hidden: int = 256
    latent: int = 64
    decoder_hidden: int = 256
    max_turns: int = 8
    max_tokens: int = 30
    word_drop: float = 0.25
    kl_anneal_steps: int = 20000
    lr: float = 2e-4
    batch_size: int = 32

    def as_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class HierarchicalEncoder(nn.Module):
    """Utterances → utterance GRU (last state, layer-normed) → context GRU (states, layer-normed)."""

    def __init__(self, config):
        super().__init__()
        self.embedding = nn.Embedding(config.vocab_size, config.embedding, padding_idx=PAD_ID)
        self.utterance_rnn = nn.GRU(config.embedding, config.utterance_hidden, batch_first=True)
        self.utterance_norm = nn.LayerNorm(config.utterance_hidden)
        self.context_rnn = nn.GRU(config.utterance_hidden, config.context_hidden, batch_first=True)
        self.context_norm = nn.LayerNorm(config.context_hidden)

    def utterances(self, tokens, lengths):
        """[N, T] padded ids, [N] lengths (≥ 1) → [N, utterance_hidden]."""
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, last = self.utterance_rnn(packed)
        return self.utterance_norm(last[-1])

    def contexts(self, utterance_vectors, turn_counts):
        """[B, turns, utterance_hidden] → context states after each turn [B, turns, context_hidden]."""
        packed = pack_padded_sequence(utterance_vectors, turn_counts.cpu(), batch_first=True, enforce_sorted=False)
        output, _ = self.context_rnn(packed)
        output, _ = nn.utils.rnn.pad_packed_sequence(output, batch_first=True, total_length=utterance_vectors.shape[1])
        return self.context_norm(output)

    def forward(self, tokens, lengths, turn_counts):
        """tokens [B, turns, T], lengths [B, turns] (0 where no turn) → (utterance vecs, context states)."""
        batch, turns, width = tokens.shape
        present = lengths.reshape(-1) > 0
        flat = torch.zeros(batch * turns, self.utterance_norm.normalized_shape[0], device=tokens.device)
        flat[present] = self.utterances(tokens.reshape(-1, width)[present], lengths.reshape(-1)[present])
        utterance_vectors = flat.reshape(batch, turns, -1)
        return utterance_vectors, self.contexts(utterance_vectors, turn_counts)


def _gaussian(layer, x):
    mu, logvar = layer(x).chunk(2, dim=-1)
    return mu, logvar.clamp(-8, 8)


class Vhred(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.encoder = HierarchicalEncoder(config)
        hidden = config.context_hidden
        self.prior = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 2 * config.latent))
        self.posterior = nn.Sequential(
            nn.Linear(hidden + config.utterance_hidden, hidden), nn.Tanh(), nn.Linear(hidden, 2 * config.latent)
        )
        self.decoder_init = nn.Linear(hidden + config.latent, config.decoder_hidden)
        self.decoder = nn.GRU(config.embedding + hidden + config.latent, config.decoder_hidden, batch_first=True)
        self.output = nn.Linear(config.decoder_hidden, config.vocab_size)

    def forward(self, tokens, lengths, turn_counts, kl_weight):
        """(loss per token, reconstruction per token, KL per turn, number of target tokens).

        Each turn t+1 is decoded from the context state after turn t and a latent z drawn from
        the posterior (which also sees turn t+1); the KL to the prior (context only) is weighted
        by `kl_weight`, annealed 0 → 1 by the caller.
        """
        utterance_vectors, states = self.encoder(tokens, lengths, turn_counts)
        target_present = lengths[:, 1:] > 0
        context = states[:, :-1][target_present]  # [M, hidden]
        target_vectors = utterance_vectors[:, 1:][target_present]
        target = tokens[:, 1:][target_present]  # [M, T]
        mu_p, logvar_p = _gaussian(self.prior, context)
        mu_q, logvar_q = _gaussian(self.posterior, torch.cat([context, target_vectors], dim=-1))
        z = mu_q + torch.randn_like(mu_q) * torch.exp(0.5 * logvar_q)
        kl = 0.5 * (logvar_p - logvar_q + (logvar_q.exp() + (mu_q - mu_p) ** 2) / logvar_p.exp() - 1).sum(-1)

        inputs = torch.cat([torch.full_like(target[:, :1], BOS_ID), target[:, :-1]], dim=1)
        if self.training and self.config.word_drop > 0:
            # Word drop: the decoder must lean on the context and z, not only on the previous words.
            drop = (torch.rand(inputs.shape, device=inputs.device) < self.config.word_drop) & (inputs != PAD_ID)
            drop[:, 0] = False
            inputs = inputs.masked_fill(drop, UNK_ID)
        condition = torch.cat([context, z], dim=-1)
        steps = inputs.shape[1]
        decoder_in = torch.cat([self.encoder.embedding(inputs), condition.unsqueeze(1).expand(-1, steps, -1)], dim=-1)
        hidden0 = torch.tanh(self.decoder_init(condition)).unsqueeze(0)
        output, _ = self.decoder(decoder_in, hidden0)
        logits = self.output(output)
        mask = target != PAD_ID
        nll = nn.functional.cross_entropy(logits[mask], target[mask], reduction="sum")
        n_tokens = int(mask.sum())
        loss = (nll + kl_weight * kl.sum()) / max(n_tokens, 1)
        return loss, nll.item() / max(n_tokens, 1), kl.mean().item() if kl.numel() else 0.0, n_tokens


def batch_tensors(dialogues, device):
    """Padded [B, turns, T] ids, [B, turns] lengths and [B] turn counts from lists of id lists."""
    turns = max(len(d) for d in dialogues)
    width = max(len(u) for d in dialogues for u in d)
    tokens = torch.zeros(len(dialogues), turns, width, dtype=torch.long)
    lengths = torch.zeros(len(dialogues), turns, dtype=torch.long)
    for b, dialogue in enumerate(dialogues):
        for t, ids in enumerate(dialogue):
            tokens[b, t, : len(ids)] = torch.tensor(ids)
            lengths[b, t] = len(ids)
    counts = torch.tensor([len(d) for d in dialogues], dtype=torch.long)
    return tokens.to(device), lengths.to(device), counts
