"""The packaged all-MiniLM-L6-v2 with mean pooling and a linear regression head.

Mean pooling over real tokens is the model's own sentence recipe, so training starts from
sentence vectors it was built to produce. The word-embedding table (half the weights) is frozen
by default: a few thousand ratings cannot teach 30,522 word vectors anything but noise, and a
checkpoint then stores only what training changed (the table is checked against the packaged
weights' digest on load).
"""

import torch
from transformers import AutoModel
from transformers.utils import logging as transformers_logging

from scoring.learned.cross_encoder.inputs import model_path

FROZEN = "encoder.embeddings.word_embeddings.weight"


class Regressor(torch.nn.Module):
    def __init__(self, encoder, dropout):
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(dropout)
        self.head = torch.nn.Linear(encoder.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled)).squeeze(-1)


def build(*, layers=None, dropout=0.1, freeze_word_embeddings=True):
    """A fresh regressor; `layers` keeps only the first N transformer layers (small test models)."""
    transformers_logging.disable_progress_bar()  # no bars in worker logs or bench output
    encoder = AutoModel.from_pretrained(model_path(), local_files_only=True)
    if layers is not None:
        encoder.encoder.layer = encoder.encoder.layer[:layers]
        encoder.config.num_hidden_layers = layers
    model = Regressor(encoder, dropout)
    if freeze_word_embeddings:
        model.get_parameter(FROZEN).requires_grad_(False)
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
