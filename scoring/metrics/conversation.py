"""Reference-free metrics of a whole conversation, computed on the evaluated system's turns (issue 37).

A conversation is a sequence of turns `(speaker, text)` (or `{"speaker", "text"}`); the turns of
speaker `system` are the system's, every other speaker is its partner. Tokens are the lower-cased
Treebank-style words of `scoring.metrics.text.words` (punctuation tokens included, as distinct-n
counts them in Li et al. 2016). A metric with nothing to measure is None.

- `system_turns`: how many turns the system took.
- `mean_turn_length`: mean number of tokens per system turn.
- `distinct_1`, `distinct_2` (Li et al. 2016): distinct n-grams / all n-grams over the system's
  turns together (n-grams do not cross a turn boundary).
- `self_repetition`: the share of the system's turns, from its second on, that repeat one of its
  earlier turns: the same normalised text, or (turns of three tokens or more) a word trigram already
  said by the system. ParlAI's "repetitive" flag, counted.
- `question_rate`: the share of system turns that ask something (hold a `?`).
- `minilm_coherence`: mean cosine of all-MiniLM-L6-v2 sentence embeddings between each system turn
  and the turn just before it (the partner's, usually); the first turn and empty turns are skipped.
  The model loads as scoring.metrics.neural loads it (offline, from its package).

No Django here (the `pure` contract): callers pass plain lists.
"""

from scoring.metrics.neural import BATCH, MAX_TOKENS, model
from scoring.metrics.text import words

SYSTEM_SPEAKER = "system"
# Stored beside each score (scoring.models.ConversationMetricScore): a changed definition bumps it,
# so old scores are recomputed rather than mixed with new ones.
VERSION = "1"
SIMPLE = ("system_turns", "mean_turn_length", "distinct_1", "distinct_2", "self_repetition", "question_rate")
NEURAL = ("minilm_coherence",)
ALL = SIMPLE + NEURAL


def _pairs(conversation):
    return [(t["speaker"], t["text"]) if isinstance(t, dict) else (t[0], t[1]) for t in conversation]


def conversation_metrics(conversations, names=SIMPLE):
    """`{name: [value per conversation]}` for the metrics `names` (of ALL), in the conversations' order."""
    unknown = set(names) - set(ALL)
    if unknown:
        raise ValueError(f"unknown conversation metrics: {', '.join(sorted(unknown))}")
    conversations = [_pairs(c) for c in conversations]
    simple = [name for name in names if name in SIMPLE]
    result = {name: [] for name in names}
    if simple:
        for conversation in conversations:
            values = simple_metrics(conversation)
            for name in simple:
                result[name].append(values[name])
    if "minilm_coherence" in names:
        result["minilm_coherence"] = minilm_coherence(conversations)
    return result


def simple_metrics(conversation):
    """Every SIMPLE metric of one conversation (a list of `(speaker, text)`)."""
    system = [text for speaker, text in conversation if speaker == SYSTEM_SPEAKER]
    tokens = [words(text.lower()) for text in system]
    n = len(system)
    return {
        "system_turns": n,
        "mean_turn_length": sum(map(len, tokens)) / n if n else None,
        "distinct_1": distinct_n(tokens, 1),
        "distinct_2": distinct_n(tokens, 2),
        "self_repetition": self_repetition(tokens),
        "question_rate": sum("?" in text for text in system) / n if n else None,
    }


def distinct_n(turn_tokens, n):
    """Distinct n-grams / all n-grams over the turns (each a token list); None when there are none."""
    grams = [tuple(tokens[i : i + n]) for tokens in turn_tokens for i in range(len(tokens) - n + 1)]
    return len(set(grams)) / len(grams) if grams else None


def self_repetition(turn_tokens):
    """Share of turns after the first that repeat an earlier one (same tokens, or a shared trigram)."""
    if len(turn_tokens) < 2:
        return None
    said_texts = set()
    said_trigrams = set()
    repeated = 0
    for i, tokens in enumerate(turn_tokens):
        text = tuple(tokens)
        trigrams = {tuple(tokens[j : j + 3]) for j in range(len(tokens) - 2)}
        if i and (text in said_texts or trigrams & said_trigrams):
            repeated += 1
        said_texts.add(text)
        said_trigrams |= trigrams
    return repeated / (len(turn_tokens) - 1)


def coherence_pairs(conversation):
    """`(previous turn, system turn)` texts whose similarity makes the coherence; empty texts left out."""
    return [
        (conversation[i - 1][1], text)
        for i, (speaker, text) in enumerate(conversation)
        if i and speaker == SYSTEM_SPEAKER and text.strip() and conversation[i - 1][1].strip()
    ]


def minilm_coherence(conversations):
    """Mean MiniLM cosine of each system turn with the turn before it, per conversation (None: no pair)."""
    pairs = [coherence_pairs(_pairs(c)) for c in conversations]
    vectors = sentence_vectors([text for pair_list in pairs for pair in pair_list for text in pair])
    return [
        sum(float(vectors[a] @ vectors[b]) for a, b in pair_list) / len(pair_list) if pair_list else None
        for pair_list in pairs
    ]


def sentence_vectors(texts):
    """`{text: normalised mean-pooled MiniLM vector}` per unique non-empty text.

    As scoring.metrics.neural.encode, without the token matrices it keeps for BERTScore: a study's
    160,000 turns would hold gigabytes of them.
    """
    import torch  # imported by model() already; a module-level import would load torch with the registry

    tokenizer, net = model()
    unique = sorted({t for t in texts if t.strip()}, key=len)
    out = {}
    with torch.inference_mode():
        for start in range(0, len(unique), BATCH):
            chunk = unique[start : start + BATCH]
            enc = tokenizer(chunk, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
            hidden = net(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
            out.update(zip(chunk, pooled.numpy(), strict=True))
    return out


# Turn level (issue 37): every reference-free measure of one system turn, its context being the
# conversation so far. `response_len` is the registry's metric of that name (whitespace tokens);
# the others are the conversation metrics above taken at one turn: `turn_distinct_1/2` (distinct
# n-grams of the turn), `turn_repeats` (1 when the turn repeats an earlier system turn as
# `self_repetition` counts one, else 0; the first system turn is None), `turn_question` (1 when it
# holds a `?`) and `turn_coherence` (neural: MiniLM cosine with the turn just before it).
TURN_SIMPLE = ("response_len", "turn_distinct_1", "turn_distinct_2", "turn_repeats", "turn_question")
TURN_NEURAL = ("turn_coherence",)
TURN_ALL = TURN_SIMPLE + TURN_NEURAL


def turn_metrics(conversations, names=TURN_SIMPLE):
    """Per conversation, `{turn index: {name: value}}` of each system turn (indices into its turns)."""
    unknown = set(names) - set(TURN_ALL)
    if unknown:
        raise ValueError(f"unknown turn metrics: {', '.join(sorted(unknown))}")
    conversations = [_pairs(c) for c in conversations]
    result = []
    for conversation in conversations:
        per_turn, said_texts, said_trigrams = {}, set(), set()
        for index, (speaker, text) in enumerate(conversation):
            if speaker != SYSTEM_SPEAKER:
                continue
            tokens = words(text.lower())
            trigrams = {tuple(tokens[j : j + 3]) for j in range(len(tokens) - 2)}
            repeats = None
            if said_texts:
                repeats = float(tuple(tokens) in said_texts or bool(trigrams & said_trigrams))
            said_texts.add(tuple(tokens))
            said_trigrams |= trigrams
            values = {
                "response_len": float(len(text.split())),
                "turn_distinct_1": distinct_n([tokens], 1),
                "turn_distinct_2": distinct_n([tokens], 2),
                "turn_repeats": repeats,
                "turn_question": float("?" in text),
            }
            per_turn[index] = {name: values[name] for name in names if name in values}
        result.append(per_turn)
    if "turn_coherence" in names:
        pairs = [
            [(i, conversation[i - 1][1], text) for i, (speaker, text) in enumerate(conversation)
             if i and speaker == SYSTEM_SPEAKER]
            for conversation in conversations
        ]  # fmt: skip
        vectors = sentence_vectors([t for group in pairs for _, a, b in group for t in (a, b)])
        for per_turn, group in zip(result, pairs, strict=True):
            for index, before, text in group:
                ok = before.strip() and text.strip()
                per_turn[index]["turn_coherence"] = float(vectors[before] @ vectors[text]) if ok else None
    return result
