"""Hand-computed values for each metric, and the registry's contract (no database)."""

import math
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pytest

import scoring.metrics as engine
from scoring.metrics import ngrams
from scoring.metrics.cider import CiderCorpus, cider
from scoring.metrics.glove import glove
from scoring.metrics.meteor_nltk import build_wordnet_dir
from scoring.metrics.ngrams import token_strings, tokenize_many
from scoring.metrics.text import strip_stopwords, words


def one(name, hyp, refs):
    return engine.score([hyp], [refs], [name])[name][0]


LONG = " ".join(f"w{i}" for i in range(500))


# --- tokens ---------------------------------------------------------------------------------


def split_back(texts, sep=None):
    ids, lengths, tokens = tokenize_many(texts, sep)
    tokens = token_strings(tokens)
    ends = np.cumsum(lengths)
    return [[tokens[i] for i in ids[end - length : end]] for end, length in zip(ends, lengths, strict=True)]


def test_batch_tokens_split_on_exactly_the_whitespace_of_str_split():
    # Arrow splits the texts; Python's str.split() is the reference (every code point but surrogates)
    texts = [f"a{chr(cp)}b" for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    assert split_back(texts) == [t.split() for t in texts]


def test_batch_tokens_match_str_split_on_runs_ends_and_empty_texts():
    rng = random.Random(3)
    pieces = ["a", "é", "😀", " ", "  ", "\t", "\n", "\u3000", "\x1c", "\xa0", "x y", ""]
    for _ in range(500):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))]
        assert split_back(texts) == [t.split() for t in texts]
        assert split_back(texts, " ") == [t.split(" ") for t in texts]


def test_batch_tokens_of_text_without_utf8_are_split_in_python():
    assert split_back(["a \ud800 b", ""]) == [["a", "\ud800", "b"], []]


def test_batch_tokens_take_no_memory_from_arrows_per_thread_pool():
    # Arrow's default pool warms up per thread, slowing the first chunks of every new worker thread
    default, system = pa.default_memory_pool(), pa.system_memory_pool()
    before = default.max_memory()
    texts = [f"token {i} of a sentence" for i in range(5000)]
    assert split_back(texts) == [t.split() for t in texts]
    assert split_back(texts, " ") == [t.split(" ") for t in texts]
    assert system.max_memory() > 0
    if default.backend_name != system.backend_name:  # ARROW_DEFAULT_MEMORY_POOL=system makes them one
        assert default.max_memory() == before


# --- registry ---------------------------------------------------------------------------------


def test_registry_names_are_unique_and_versioned():
    names = [m.name for m in engine.all_metrics()]
    assert len(names) == len(set(names))
    for expected in ("bleu1", "bleu4", "rouge_l", "cider", "meteor", "meteor_nltk", "embedding_average"):
        assert expected in names
    assert all(m.version for m in engine.all_metrics())
    assert engine.get("bleu4").params["reflen"] == "closest"


def test_registry_rejects_unknown_metric_by_name():
    with pytest.raises(KeyError, match="unknown metric 'bleu5'"):
        engine.get("bleu5")


def test_registering_same_name_with_another_version_fails():
    base = engine.get("bleu1")
    with pytest.raises(ValueError, match="registered twice"):
        engine.register(engine.Metric("bleu1", "999", base.family))


# --- BLEU (pycocoevalcap's constants make short exact matches score oddly, faithfully) ---------


def test_bleu_of_exact_two_token_match_follows_pycocoevalcap_smoothing_constants():
    scores = engine.score(["the cat"], [["the cat"]], ["bleu1", "bleu2", "bleu3", "bleu4"])
    assert scores["bleu1"][0] == pytest.approx(1, abs=1e-8)
    assert scores["bleu2"][0] == pytest.approx(1, abs=1e-8)
    # no trigram to guess: precision (0 + 1e-15) / (0 + 1e-9) = 1e-6
    assert scores["bleu3"][0] == pytest.approx(1e-6 ** (1 / 3), rel=1e-6)
    assert scores["bleu4"][0] == pytest.approx((1e-6 * 1e-6) ** (1 / 4), rel=1e-6)


def test_bleu_of_single_token():
    scores = engine.score(["hello"], [["hello"]], ["bleu1", "bleu2", "bleu4"])
    assert scores["bleu1"][0] == pytest.approx(1, abs=1e-8)
    assert scores["bleu2"][0] == pytest.approx(1e-3, rel=1e-6)
    assert scores["bleu4"][0] == pytest.approx(10**-4.5, rel=1e-6)


def test_bleu_of_empty_response_is_zero():
    assert engine.score([""], [["a b c"]], ["bleu1", "bleu4"]) == {"bleu1": [0.0], "bleu4": [0.0]}


def test_bleu_brevity_penalty_uses_closest_reference_length():
    # closest of 4 and 9 tokens to a 2-token response is 4: penalty exp(1 - 4/2)
    assert one("bleu1", "the cat", ["the cat sat on", "x x x x x x x x x"]) == pytest.approx(math.exp(-1), rel=1e-8)


def test_bleu_clips_counts_to_the_reference_maximum():
    # "the" 3 times in the response, at most twice in one reference: 2 of 3 unigrams count
    assert one("bleu1", "the the the", ["the the cat", "the a b"]) == pytest.approx(2 / 3, rel=1e-8)


def test_bleu_handles_non_ascii_and_emoji_tokens():
    assert one("bleu2", "über café 😀", ["über café 😀"]) == pytest.approx(1, abs=1e-8)
    assert one("bleu1", "东京 😀", ["東京 🎉 x"]) == pytest.approx(0.0, abs=1e-6)


def test_bleu_of_very_long_identical_response_is_one():
    assert one("bleu4", LONG, [LONG]) == pytest.approx(1, abs=1e-8)


def test_corpus_bleu_sums_counts_over_responses():
    # 3 of 4 unigrams match over the corpus; lengths add up to 4 = 4
    b1 = engine.bleu.corpus_bleu(["a b", "c d"], [["a b"], ["c x"]])[0]
    assert b1 == pytest.approx(3 / 4, rel=1e-8)


@pytest.mark.parametrize(
    ("name", "expected"), [("bleu4_smooth1", 0.01**0.25), ("bleu4_smooth2", 1.0), ("bleu4_smooth3", 0.125**0.25)]
)
def test_smoothed_bleu4_follows_chen_and_cherry(name, expected):
    assert one(name, "the cat", ["the cat"]) == pytest.approx(expected, rel=1e-9)


# --- ROUGE-L --------------------------------------------------------------------------------


def test_rouge_l_is_lcs_f_measure_with_beta_1_2():
    precision, recall = 2 / 3, 2 / 5  # LCS "the cat"
    expected = (1 + 1.44) * precision * recall / (recall + 1.44 * precision)
    assert one("rouge_l", "the cat sat", ["the cat on the mat"]) == pytest.approx(expected, rel=1e-12)


def test_rouge_l_maximises_precision_and_recall_separately_over_references():
    # ref 1 gives P=0.5 R=1, ref 2 gives P=1 R=0.5: pycocoevalcap combines the two maxima
    assert one("rouge_l", "a b c d", ["a b", "a b c d e f g h"]) == pytest.approx(1.0)


def test_rouge_l_of_empty_response():
    assert one("rouge_l", "", ["a b"]) == 0.0
    # split(" ") makes "" one empty token, which matches an empty reference
    assert one("rouge_l", "", [""]) == 1.0


def test_rouge_l_handles_long_texts_beyond_one_machine_word():
    tokens = LONG.split()
    changed = " ".join([*tokens[:250], "zz", *tokens[251:]])
    assert one("rouge_l", LONG, [LONG]) == 1.0
    assert one("rouge_l", changed, [LONG]) == pytest.approx(499 / 500)


def test_rouge_l_handles_emoji():
    assert one("rouge_l", "😀 über", ["😀 x über"]) == pytest.approx(2.44 * 1 * (2 / 3) / (2 / 3 + 1.44))


# --- CIDEr ----------------------------------------------------------------------------------


def test_cider_on_a_two_item_corpus():
    # item 1: every 1- and 2-gram matches with idf ln 2; orders 3 and 4 are empty -> (1+1+0+0)/4*10
    assert cider(["a b", "c"], [["a b"], ["d"]]).tolist() == pytest.approx([5.0, 0.0])


def test_cider_in_chunks_equals_cider_on_the_whole_corpus():
    hyps = ["a b c", "a b", "c d e", "", "😀 a"]
    refs = [["a b c d"], ["a c"], ["c d"], ["x"], ["😀 a b", "a"]]
    whole = cider(hyps, refs)
    corpus = CiderCorpus.from_refs(refs)
    parts = np.concatenate([cider(hyps[:2], refs[:2], corpus), cider(hyps[2:], refs[2:], corpus)])
    assert parts == pytest.approx(whole, abs=1e-12)


def test_cider_in_chunks_with_one_reference_each_equals_cider_on_the_whole_corpus():
    hyps = ["a b c", "a b", "c d e", "", "😀 a", "a b c d e"]
    refs = [["a b c d"], ["a c"], ["c d"], ["x"], ["😀 a b"], ["a b c d e"]]
    corpus = CiderCorpus.from_refs(refs)
    parts = np.concatenate([cider(hyps[:4], refs[:4], corpus), cider(hyps[4:], refs[4:], corpus)])
    assert parts == pytest.approx(cider(hyps, refs), abs=1e-12)


def test_cider_corpus_without_long_n_grams_gives_them_no_document_frequency():
    corpus = CiderCorpus.from_refs([["a"], ["b"]])  # no reference has a bigram
    assert corpus.document_frequencies(1, np.array([1, 2], dtype=np.uint64)).tolist() == [0, 0]
    assert cider(["a b", "b"], [["a"], ["b"]], corpus).tolist() == pytest.approx(cider(["a b", "b"], [["a"], ["b"]]))


def test_cider_corpus_weights_count_shared_references_once_per_response():
    refs = [["a b"], ["c d"]]
    weighted = CiderCorpus.from_refs(refs, weights=[2, 1])
    expanded = CiderCorpus.from_refs([["a b"], ["a b"], ["c d"]])
    assert weighted.n_items == expanded.n_items == 3
    for a, b in zip(weighted.df, expanded.df, strict=True):
        assert a.tolist() == b.tolist()


# --- embedding metrics ------------------------------------------------------------------------


def _vec(word):
    g = glove()
    row = g.index.get_indexer([word])[0]
    return g.vectors[row] if row >= 0 else g.vectors[-1]


def _cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_embedding_metrics_of_identical_text_are_one():
    scores = engine.score(
        ["the cat sat"], [["the cat sat"]], ["embedding_average", "greedy_matching", "vector_extrema"]
    )
    for values in scores.values():
        assert values[0] == pytest.approx(1.0, abs=1e-12)


def test_embedding_average_of_single_words_is_their_cosine():
    assert one("embedding_average", "cat", ["dog"]) == pytest.approx(_cos(_vec("cat"), _vec("dog")), abs=1e-12)


def test_unknown_and_capitalised_words_get_the_mean_vector_as_in_nlg_eval():
    # GloVe is lower case and nlg-eval does not lower-case: "Cat" is unknown
    assert one("embedding_average", "Cat", ["cat"]) == pytest.approx(_cos(glove().vectors[-1], _vec("cat")), abs=1e-12)
    assert one("embedding_average", "zzqxv", ["qqzzx"]) == pytest.approx(1.0)


def test_greedy_matching_averages_best_matches_both_ways():
    cat, dog, mat = _vec("cat"), _vec("dog"), _vec("mat")
    hyp_side = (max(_cos(cat, dog), _cos(cat, mat)) + 1.0) / 2  # "cat", "dog" against ref words
    ref_side = (1.0 + max(_cos(mat, cat), _cos(mat, dog))) / 2  # "dog", "mat" against hyp words
    assert one("greedy_matching", "cat dog", ["dog mat"]) == pytest.approx((hyp_side + ref_side) / 2, abs=1e-12)


def test_vector_extrema_keeps_the_more_extreme_value_per_dimension():
    cat, dog = _vec("cat"), _vec("dog")
    high, low = np.maximum(cat, dog), np.minimum(cat, dog)
    extrema = np.where(low > 0, high, np.where((low < 0) & (high > -low), high, low))
    expected = _cos(extrema, _vec("mat"))
    assert one("vector_extrema", "cat dog", ["mat"]) == pytest.approx(expected, abs=1e-12)


def test_embedding_metrics_take_the_best_reference():
    alone = one("embedding_average", "cat", ["dog"])
    assert one("embedding_average", "cat", ["pizza", "dog"]) == pytest.approx(alone)


def test_embedding_metrics_of_empty_text_are_undefined():
    scores = engine.score(["", "cat"], [["cat"], [""]], ["embedding_average", "greedy_matching", "vector_extrema"])
    assert all(values == [None, None] for values in scores.values())


def test_embedding_metrics_handle_emoji_and_long_text():
    assert one("greedy_matching", "😀 über", ["😀 über"]) == pytest.approx(1.0)
    assert one("vector_extrema", LONG, [LONG]) == pytest.approx(1.0)


def test_embedding_metrics_in_blocks_match_one_block(monkeypatch):
    from scoring.metrics import glove as glove_module

    rng = random.Random(7)
    vocab = ["cat", "dog", "the", "a", "pizza", "über", "😀", "zzzunknown", "sat", "mat"]
    hyps = [" ".join(rng.choices(vocab, k=rng.randint(0, 8))) for _ in range(23)]
    refs = [[" ".join(rng.choices(vocab, k=rng.randint(0, 6))) for _ in range(rng.randint(1, 3))] for _ in hyps]
    whole = glove_module.embedding_scores(hyps, refs)
    monkeypatch.setattr(glove_module, "BLOCK", 5)
    blocks = glove_module.embedding_scores(hyps, refs)
    assert set(blocks) == set(glove_module.NAMES)
    for name in glove_module.NAMES:
        assert len(blocks[name]) == len(hyps)
        np.testing.assert_allclose(blocks[name], whole[name], rtol=0, atol=1e-12)
    assert np.isnan(whole["greedy_matching"]).any()  # the empty texts are in it


def test_an_empty_batch_scores_to_empty_lists():
    # a chunk whose responses all lack a reference hands the engine nothing to score
    names = ["bleu4", "rouge_l", "cider", "embedding_average", "greedy_matching", "vector_extrema"]
    assert engine.score([], [], names) == {name: [] for name in names}


def test_bleu_and_rouge_l_in_blocks_match_one_block(monkeypatch):
    from scoring.metrics import registry

    rng = random.Random(11)
    vocab = ["cat", "dog", "the", "a", "über", "😀", "sat", "mat", "on"]
    hyps = [" ".join(rng.choices(vocab, k=rng.randint(0, 9))) for _ in range(23)]
    refs = [[" ".join(rng.choices(vocab, k=rng.randint(0, 7))) for _ in range(rng.randint(1, 3))] for _ in hyps]
    names = ["bleu1", "bleu2", "bleu3", "bleu4", "bleu4_smooth1", "bleu4_smooth2", "bleu4_smooth3", "rouge_l"]
    whole = engine.score(hyps, refs, names)
    corpus = engine.bleu.corpus_bleu(hyps, refs)
    monkeypatch.setattr(registry, "PAIR_BLOCK", 5)
    blocks = engine.score(hyps, refs, names)
    for name in names:
        assert len(blocks[name]) == len(hyps)
        np.testing.assert_allclose(blocks[name], whole[name], rtol=0, atol=1e-15, err_msg=name)
    assert engine.bleu.corpus_bleu(hyps, refs) == pytest.approx(corpus, rel=1e-12)
    assert len(set(whole["bleu4"])) > 3  # not a degenerate batch


# --- METEOR (NLTK), variants, lengths -------------------------------------------------------


def test_meteor_nltk_of_identical_text(tmp_path, monkeypatch):
    # 3 matches in one chunk: penalty 0.5 * (1/3)^3
    assert one("meteor_nltk", "the cat sat", ["the cat sat"]) == pytest.approx(1 - 0.5 / 27)
    assert one("meteor_nltk", "", ["the cat"]) == 0.0


def test_wordnet_folder_holds_copies_and_lexnames(tmp_path):
    folder = build_wordnet_dir(tmp_path)
    assert (folder / "lexnames").read_text().splitlines()[3] == "03\tnoun.Tops\t1"
    assert not (folder / "data.noun").is_symlink()
    assert (folder / "data.noun").stat().st_size > 1_000_000


def test_wordnet_folder_built_by_several_workers_at_once_is_whole_and_leaves_no_staging(tmp_path):
    """Two demo builds on a fresh machine crashed here: both copied into one shared staging folder
    and each removed the other's."""
    start = threading.Barrier(4)

    def build():
        start.wait()
        return build_wordnet_dir(tmp_path)

    with ThreadPoolExecutor(4) as pool:
        folders = list(pool.map(lambda _: build(), range(4)))
    assert set(folders) == {tmp_path / "corpora" / "wordnet"}
    assert (folders[0] / "lexnames").is_file() and (folders[0] / "data.noun").stat().st_size > 1_000_000
    assert [p.name for p in (tmp_path / "corpora").iterdir()] == ["wordnet"]
    assert oct(folders[0].stat().st_mode & 0o777) == "0o755"


def test_stopword_variants_score_the_filtered_texts():
    assert strip_stopwords("The cat is on the mat, isn't it?") == "cat mat"
    assert one("bleu2_nostop", "The cat is on the mat.", ["A cat on a mat!"]) == pytest.approx(1, abs=1e-8)
    assert one("rouge_l_nostop", "I love pizza", ["you love pizza"]) == pytest.approx(1.0)


def test_words_splits_punctuation_and_clitics():
    assert words("I don't know, it's 3.5 über 😀!") == [
        "I",
        "do",
        "n't",
        "know",
        ",",
        "it",
        "'s",
        "3.5",
        "über",
        "😀",
        "!",
    ]


def test_length_statistics():
    scores = engine.score(["a b c", ""], [["a b", "a b c d"], ["x"]], ["response_len", "reference_len", "length_diff"])
    assert scores == {"response_len": [3.0, 0.0], "reference_len": [3.0, 1.0], "length_diff": [0.0, -1.0]}


@pytest.mark.slow
def test_neural_metrics_of_identical_and_empty_text():
    scores = engine.score(["the cat sat", ""], [["the cat sat"], ["x"]], ["sentence_cosine", "bertscore_f1"])
    assert scores["sentence_cosine"][0] == pytest.approx(1.0, abs=1e-5)
    assert scores["bertscore_f1"][0] == pytest.approx(1.0, abs=1e-5)
    assert scores["sentence_cosine"][1] is None
    assert scores["bertscore_f1"][1] is None
    related = one("sentence_cosine", "I love pizza", ["pizza is my favourite food"])
    unrelated = one("sentence_cosine", "I love pizza", ["the train leaves at noon"])
    assert related > unrelated


def test_meteor_without_java_fails_with_a_clear_message(monkeypatch):
    monkeypatch.setattr(engine.meteor.shutil, "which", lambda name: None)
    with pytest.raises(engine.MetricUnavailable, match=r"METEOR needs Java.*meteor_nltk"):
        engine.meteor.MeteorScorer()


def test_lookup_returns_each_querys_value_in_order():
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 2**62, 5000, dtype=np.int64)).astype(np.uint64)
    values = rng.integers(1, 100, len(keys))
    queries = np.concatenate([rng.choice(keys, 3000), rng.integers(0, 2**62, 1000).astype(np.uint64), keys[:1]])
    rng.shuffle(queries)
    expected = [dict(zip(keys.tolist(), values.tolist(), strict=True)).get(q, -1) for q in queries.tolist()]
    assert ngrams.lookup(keys, values, queries, default=-1).tolist() == expected


def test_factorize_and_distinct_number_values_in_order_of_first_appearance():
    rng = np.random.default_rng(5)
    values = rng.integers(-(2**40), 2**40, 3000, dtype=np.int64)[rng.integers(0, 3000, 20_000)]
    first_seen = {}
    for value in values.tolist():
        first_seen.setdefault(value, len(first_seen))
    assert ngrams.factorize(values).tolist() == [first_seen[v] for v in values.tolist()]
    assert ngrams.distinct(values).tolist() == list(first_seen)
    assert ngrams.factorize(values[:0]).tolist() == ngrams.distinct(values[:0]).tolist() == []


def test_batch_tokens_too_large_for_an_arrow_string_array_are_split_in_python(monkeypatch):
    monkeypatch.setattr(ngrams, "MAX_ARROW_BYTES", 10)  # stands for Arrow's 2 GB of text
    texts = ["a b  a", " c\td ", "", "é 😀 é"]
    assert split_back(texts) == [t.split() for t in texts]
    assert split_back(texts, " ") == [t.split(" ") for t in texts]
