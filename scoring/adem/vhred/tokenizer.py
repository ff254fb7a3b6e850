"""Sub-word (BPE) tokeniser trained on the pre-training corpus with the `tokenizers` package."""

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = [PAD, UNK, BOS, EOS]  # ids 0..3, in this order


def train_bpe(dialogues, vocab_size=8000):
    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tokenizer.train_from_iterator((turn for dialogue in dialogues for turn in dialogue), trainer=trainer)
    return tokenizer


def from_json(text):
    return Tokenizer.from_str(text)


def encode_turns(tokenizer, turns, max_tokens):
    """Token ids per turn, each cut to `max_tokens` and ended with </s> (never empty)."""
    eos = tokenizer.token_to_id(EOS)
    return [[*e.ids[: max_tokens - 1], eos] for e in tokenizer.encode_batch(list(turns))]
