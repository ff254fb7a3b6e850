"""The packaged all-MiniLM-L6-v2 with mean pooling and a linear regression head.

Mean pooling over real tokens is the model's own sentence recipe, so training starts from
sentence vectors it was built to produce. The word-embedding table (half the weights) is frozen
by default: a few thousand ratings cannot teach 30,522 word vectors anything but noise, and a
checkpoint then stores only what training changed (the table is checked against the packaged
weights' digest on load).

`frozen_layers` freezes the embeddings and the first N transformer layers as well. The network is
then two halves: `bottom` (embeddings and frozen layers) gives the same hidden states for a
sequence in every epoch, so a fit computes them once (`bottom_states`) and each training step
runs, and back-propagates through, the upper layers only. `forward` is `top(bottom(...))`, the
same arithmetic as the encoder's own forward (a test checks it), so scoring is unchanged.
"""

import torch
from transformers import AutoModel
from transformers.masking_utils import create_bidirectional_mask
from transformers.utils import logging as transformers_logging

from scoring.learned.cross_encoder.inputs import model_path

FROZEN = "encoder.embeddings.word_embeddings.weight"


class Regressor(torch.nn.Module):
    def __init__(self, encoder, dropout, frozen_layers=0):
        super().__init__()
        self.encoder = encoder
        self.frozen_layers = frozen_layers
        self.dropout = torch.nn.Dropout(dropout)
        self.head = torch.nn.Linear(encoder.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def _layers(self, hidden, attention_mask, layers):
        # The encoder's own mask (its attention implementation's format), from the 0/1 mask.
        mask = create_bidirectional_mask(
            config=self.encoder.config, inputs_embeds=hidden, attention_mask=attention_mask
        )
        for layer in layers:
            hidden = layer(hidden, mask)
        return hidden

    def bottom(self, input_ids, attention_mask, token_type_ids):
        """Hidden states after the embeddings and the frozen layers."""
        hidden = self.encoder.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        return self._layers(hidden, attention_mask, self.encoder.encoder.layer[: self.frozen_layers])

    def top(self, hidden, attention_mask):
        """The score from the bottom's hidden states: the trained layers, mean pooling, the head."""
        hidden = self._layers(hidden, attention_mask, self.encoder.encoder.layer[self.frozen_layers :])
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled)).squeeze(-1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.top(self.bottom(input_ids, attention_mask, token_type_ids), attention_mask)


def build(*, layers=None, dropout=0.1, freeze_word_embeddings=True, frozen_layers=0, attention_dropout=None):
    """A fresh regressor; `layers` keeps only the first N transformer layers (small test models);
    `frozen_layers` (at most all of them) freezes the embeddings and that many layers from the bottom;
    `attention_dropout` replaces the model's own dropout of attention probabilities (0.1) in training."""
    transformers_logging.disable_progress_bar()  # no bars in worker logs or bench output
    encoder = AutoModel.from_pretrained(model_path(), local_files_only=True)
    if layers is not None:
        encoder.encoder.layer = encoder.encoder.layer[:layers]
        encoder.config.num_hidden_layers = layers
    if attention_dropout is not None:
        for layer in encoder.encoder.layer:
            layer.attention.self.dropout.p = attention_dropout
    frozen_layers = min(frozen_layers, encoder.config.num_hidden_layers)
    model = Regressor(encoder, dropout, frozen_layers)
    if freeze_word_embeddings:
        model.get_parameter(FROZEN).requires_grad_(False)
    if frozen_layers:
        for part in (encoder.embeddings, *encoder.encoder.layer[:frozen_layers]):
            part.requires_grad_(False)
    return model


def pad(batch, pad_id):
    """Tensors (input_ids, attention_mask, token_type_ids) for a list of (ids, types) pairs."""
    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (token_ids, type_ids) in enumerate(batch):
        ids[row, : len(token_ids)] = torch.tensor(token_ids)
        types[row, : len(type_ids)] = torch.tensor(type_ids)
        mask[row, : len(token_ids)] = 1
    return ids, mask, types


def bottom_states(model, batches, pad_id):
    """One (length, hidden) tensor per sequence: the bottom's states of its real tokens.

    `batches` is a list of lists of (ids, types) pairs; states come back in the same order, flat.
    Computed in eval mode (the frozen layers' dropout off, so every epoch sees the same states)
    and without autograd, since nothing below them trains."""
    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad():  # not inference_mode: the states are inputs of later autograd graphs
        for batch in batches:
            ids, mask, types = pad(batch, pad_id)
            hidden = model.bottom(ids, mask, types)
            out += [hidden[row, : len(token_ids)].clone() for row, (token_ids, _) in enumerate(batch)]
    model.train(was_training)
    return out


def pad_states(states):
    """(hidden, attention_mask) for a list of (length, hidden) tensors, zero-padded on the right."""
    width = max(len(s) for s in states)
    hidden = torch.zeros((len(states), width, states[0].shape[1]), dtype=states[0].dtype)
    mask = torch.zeros((len(states), width), dtype=torch.long)
    for row, state in enumerate(states):
        hidden[row, : len(state)] = state
        mask[row, : len(state)] = 1
    return hidden, mask
