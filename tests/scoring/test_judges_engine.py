"""The judge engine without Django: templates, parsing, the client against a real local server, pairs."""

import re
import time

import pytest

from scoring.judges import pairwise, prompts
from scoring.judges.client import JudgeNotSent, JudgeRequestFailed, JudgeSettings, judge_prompts, redact
from scoring.judges.parsing import parse_preference, parse_rating
from tests.scoring.chat_server import Scripted

TEMPLATE = prompts.get_template(prompts.RATING)


def messages_for(text):
    return prompts.rating_messages(TEMPLATE, context=["hi", "how are you?"], response=text)


def settings_for(server, **overrides):
    return JudgeSettings(
        base_url=server.base_url, model="judge-model", allow_private=True, **{"timeout": 5.0, **overrides}
    )


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("Score: 4", 4.0),
        ("score = 2", 2.0),
        ('{"score": 5}', 5.0),
        ("3", 3.0),
        ("**4**", 4.0),
        ("4/5", 4.0),
        ("I think it is fine. Score: 1", 1.0),
        ("Score: 7", None),
        ("Score: 0", None),
        ("It is a good reply.", None),
        ("Score: 2 ... actually Score: 4", None),
        ("", None),
        ("between 3 and 4", None),
    ],
)
def test_parse_rating_reads_a_score_or_gives_none_never_a_guess(reply, score):
    assert parse_rating(reply) == score


@pytest.mark.parametrize(
    ("reply", "pick"),
    [
        ("Winner: A", "A"),
        ("winner: b", "B"),
        ("B", "B"),
        ("Response A", "A"),
        ("Winner: A. Winner: B", None),
        ("both", None),
    ],
)
def test_parse_preference_reads_a_or_b_or_gives_none(reply, pick):
    assert parse_preference(reply) == pick


def test_prompt_hash_is_stable_and_changes_with_the_text():
    assert prompts.prompt_hash(messages_for("x")) == prompts.prompt_hash(messages_for("x"))
    assert prompts.prompt_hash(messages_for("x")) != prompts.prompt_hash(messages_for("y"))
    assert re.fullmatch(r"[0-9a-f]{64}", prompts.prompt_hash(messages_for("x")))


def test_rating_with_reference_template_shows_the_reference_and_the_context_turns():
    template = prompts.get_template(prompts.RATING_WITH_REFERENCE)
    user = prompts.rating_messages(template, context=["hello", "hi"], response="resp", reference="ref")[1]["content"]
    assert "A: hello\nB: hi" in user and "ref" in user and "resp" in user


def test_normal_replies_are_parsed_per_prompt_with_their_token_usage(chat_server):
    chat_server.answer = lambda body, n: f"Score: {len(body['messages'][-1]['content']) % 5 + 1}"
    texts = ["short", "a somewhat longer reply", "medium one"]
    verdicts = judge_prompts(settings_for(chat_server), [messages_for(t) for t in texts], parse_rating)
    for text, verdict in zip(texts, verdicts, strict=True):
        assert verdict.values == [float(len(messages_for(text)[-1]["content"]) % 5 + 1)]
        assert verdict.prompt_tokens == len(messages_for(text)[-1]["content"].split())
        assert verdict.completion_tokens == 2
    body = chat_server.requests[0][1]
    assert body["model"] == "judge-model" and body["messages"][0]["role"] == "system"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 16


def test_an_unparseable_reply_is_none_and_counted(chat_server):
    chat_server.answer = lambda body, n: "This response is quite good overall."
    (verdict,) = judge_prompts(settings_for(chat_server), [messages_for("x")], parse_rating)
    assert verdict.values == [None] and verdict.mean is None and verdict.unparseable == 1


def test_samples_are_separate_requests_averaged_with_their_spread(chat_server):
    chat_server.answer = lambda body, n: ["Score: 2", "Score: 4", "no idea"][(n - 1) % 3]
    (verdict,) = judge_prompts(settings_for(chat_server, samples=3, concurrency=1), [messages_for("x")], parse_rating)
    assert len(chat_server.requests) == 3
    assert sorted(v for v in verdict.values if v is not None) == [2.0, 4.0] and verdict.unparseable == 1
    assert verdict.mean == 3.0 and verdict.spread == 1.0


def test_a_429_is_retried_after_the_seconds_retry_after_names(chat_server):
    chat_server.answer = lambda body, n: Scripted(429, headers={"Retry-After": "1"}) if n == 1 else "Score: 5"
    (verdict,) = judge_prompts(settings_for(chat_server), [messages_for("x")], parse_rating)
    assert verdict.values == [5.0]
    (first, *_), (second, *_) = chat_server.requests
    assert second - first >= 0.95  # waited as told, not the SDK's default 0.5 s backoff


def test_a_500_is_retried_and_a_server_that_keeps_failing_fails_with_its_status(chat_server):
    chat_server.answer = lambda body, n: Scripted(500) if n == 1 else "Score: 2"
    (verdict,) = judge_prompts(settings_for(chat_server), [messages_for("x")], parse_rating)
    assert verdict.values == [2.0] and len(chat_server.requests) == 2
    chat_server.requests.clear()
    chat_server.answer = lambda body, n: Scripted(500)
    (failure,) = judge_prompts(settings_for(chat_server, max_retries=1), [messages_for("x")], parse_rating)
    assert isinstance(failure, JudgeRequestFailed) and "HTTP 500" in str(failure)
    assert len(chat_server.requests) == 2


def test_a_timeout_is_retried_then_answered(chat_server):
    chat_server.answer = lambda body, n: Scripted(reply="Score: 4", delay=1.5) if n == 1 else "Score: 4"
    started = time.monotonic()
    (verdict,) = judge_prompts(settings_for(chat_server, timeout=0.5), [messages_for("x")], parse_rating)
    assert verdict.values == [4.0] and len(chat_server.requests) == 2
    assert time.monotonic() - started < 5


def test_a_server_that_never_answers_in_time_fails_with_a_clear_message(chat_server):
    chat_server.answer = lambda body, n: Scripted(reply="Score: 4", delay=1.0)
    (failure,) = judge_prompts(settings_for(chat_server, timeout=0.3, max_retries=1), [messages_for("x")], parse_rating)
    assert isinstance(failure, JudgeRequestFailed) and "did not answer within 0.3 s" in str(failure)


def test_concurrency_never_exceeds_the_judges_limit(chat_server):
    active, peak = [0], [0]

    def answer(body, n):
        with chat_server.lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with chat_server.lock:
            active[0] -= 1
        return "Score: 3"

    chat_server.answer = answer
    judge_prompts(settings_for(chat_server, concurrency=3), [messages_for(str(i)) for i in range(12)], parse_rating)
    assert peak[0] == 3


def test_the_api_key_is_sent_as_a_bearer_token_and_kept_out_of_errors_and_repr(chat_server):
    chat_server.answer = lambda body, n: Scripted(401)
    settings = settings_for(chat_server, api_key="sk-secret-123")
    (failure,) = judge_prompts(settings, [messages_for("x")], parse_rating)
    assert chat_server.requests[0][2] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in str(failure) and "sk-secret-123" not in repr(settings)
    assert redact("Incorrect API key provided: sk-abc***xyz.", "sk-other") == "Incorrect API key provided: [key]"


def test_an_endpoint_nobody_listens_on_is_given_up_after_a_few_prompts_and_the_rest_are_not_sent(dead_url):
    settings = JudgeSettings(
        base_url=dead_url, model="judge-model", max_retries=1, concurrency=1, unreachable_after=3, allow_private=True
    )
    started = time.monotonic()
    results = judge_prompts(settings, [messages_for(str(i)) for i in range(20)], parse_rating)
    # each of the first three waited for its retry (about half a second); the 17 others none
    assert time.monotonic() - started < 4
    tried, skipped = results[:3], results[3:]
    assert all(f"cannot reach {dead_url}" in str(failure) for failure in tried)
    assert not any(isinstance(failure, JudgeNotSent) for failure in tried)
    assert all(isinstance(failure, JudgeNotSent) for failure in skipped)
    assert f"{dead_url} could not be reached" in str(skipped[0])


def test_a_host_that_never_answers_the_connection_is_given_up_at_the_connect_timeout_not_the_request_limit(
    silent_url,
):
    # a request may take its whole limit (a slow model), but a connection that is not made within
    # the connect timeout never will be: without its own limit a silent host held each prompt for
    # the request limit and each retry again
    settings = JudgeSettings(
        base_url=silent_url,
        model="judge-model",
        timeout=60.0,
        connect_timeout=0.5,
        max_retries=0,
        concurrency=1,
        allow_private=True,
    )
    (failure,) = judge_prompts(settings, [messages_for("x")], parse_rating)
    assert str(failure) == f"cannot reach {silent_url}: no connection within 0.5 s (0 retries)"


def test_a_server_that_refuses_every_prompt_with_an_http_error_is_still_asked_every_prompt(chat_server):
    chat_server.answer = lambda body, n: Scripted(400)
    settings = settings_for(chat_server, max_retries=0, concurrency=1, unreachable_after=2)
    results = judge_prompts(settings, [messages_for(str(i)) for i in range(6)], parse_rating)
    assert len(chat_server.requests) == 6
    assert all("HTTP 400" in str(failure) and not isinstance(failure, JudgeNotSent) for failure in results)


# --- pairwise ---------------------------------------------------------------------------------


def test_pairwise_judging_swaps_positions_and_maps_picks_back_to_the_pair():
    template = prompts.get_template(prompts.PAIRWISE)
    item = pairwise.PairItem(context=["hi"], reply_a="apple", reply_b="banana", human_winner="A")
    a_first, b_first = pairwise.both_orders_messages(template, item)
    assert a_first[1]["content"].index("apple") < a_first[1]["content"].index("banana")
    assert b_first[1]["content"].index("banana") < b_first[1]["content"].index("apple")
    # the judge picked "A" both times: the first-shown reply, i.e. apple then banana
    assert pairwise.verdict_from_picks("A", "A") == pairwise.PairVerdict("A", "B")


def test_pairwise_statistics_give_agreement_position_bias_and_self_consistency():
    items = [
        pairwise.PairItem(["c"], "a1", "b1", "A"),
        pairwise.PairItem(["c"], "a2", "b2", "B"),
        pairwise.PairItem(["c"], "a3", "b3", "A"),
        pairwise.PairItem(["c"], "a4", "b4", "tie"),
    ]
    verdicts = [
        pairwise.verdict_from_picks("A", "B"),  # consistent on A: agrees
        pairwise.verdict_from_picks("A", "A"),  # always the first shown: inconsistent
        pairwise.verdict_from_picks("B", "A"),  # consistent on B: disagrees
        pairwise.verdict_from_picks("A", None),  # one order unreadable
    ]
    stats = pairwise.pairwise_statistics(items, verdicts)
    assert stats["agreement_with_humans"] == pytest.approx(1 / 3)
    assert stats["n_with_human_winner"] == 3
    # shown first and picked: pair 1 once, pair 2 twice, pair 3 once (B shown first), pair 4 once; of 7 readable
    assert stats["unreadable_verdicts"] == 1
    assert stats["position_bias"] == pytest.approx(5 / 7)
    assert stats["self_consistency"] == pytest.approx(2 / 3)


def test_a_pair_judged_by_several_people_counts_once_for_the_judges_own_behaviour():
    # Three people judged pair 1 (two chose A, one B); one person judged pair 2. The model's
    # verdict on a pair is the same each time: its prompts are the same.
    first = pairwise.PairItem(["c", {"speaker": "B", "text": "d"}], "x", "y", None)
    items = [
        pairwise.PairItem(first.context, "x", "y", "A"),
        pairwise.PairItem(first.context, "x", "y", "A"),
        pairwise.PairItem(first.context, "x", "y", "B"),
        pairwise.PairItem(["c"], "x", "y", "A"),  # another context: another pair
    ]
    always_first = pairwise.verdict_from_picks("A", "A")
    consistent_a = pairwise.verdict_from_picks("A", "B")
    stats = pairwise.pairwise_statistics(items, [always_first] * 3 + [consistent_a])
    assert (stats["n_pairs"], stats["n_judgements"], stats["n_verdicts"]) == (2, 4, 4)
    # pair 1: both orders picked the first shown (2 of 2); pair 2: A first, then A second (1 of 2)
    assert stats["position_bias"] == pytest.approx(3 / 4)
    assert stats["self_consistency"] == pytest.approx(1 / 2)
    # every human judgement counts for agreement: only the one on pair 2 is matched
    assert stats["agreement_with_humans"] == pytest.approx(1 / 4) and stats["n_with_human_winner"] == 4


def test_a_pair_shown_the_other_way_round_is_the_same_pair_for_the_judges_own_behaviour():
    # One survey showed x on the left, another (or an imported file) y: the same two prompts, so
    # the judge's cached verdicts are the same ones, mirrored, and count once.
    items = [pairwise.PairItem(["c"], "x", "y", "A"), pairwise.PairItem(["c"], "y", "x", "B")]
    # x first: picked the first shown (x); y first: picked the first shown (y)
    verdicts = [pairwise.verdict_from_picks("A", "A"), pairwise.verdict_from_picks("A", "A")]
    stats = pairwise.pairwise_statistics(items, verdicts)
    assert (stats["n_pairs"], stats["n_judgements"], stats["n_verdicts"]) == (1, 2, 2)
    assert stats["position_bias"] == 1.0 and stats["self_consistency"] == 0.0


def test_pairwise_judging_against_the_server_finds_a_judge_that_always_picks_the_first_reply(chat_server):
    chat_server.answer = lambda body, n: "Winner: A"
    template = prompts.get_template(prompts.PAIRWISE)
    items = [pairwise.PairItem(["c"], f"x{i}", f"y{i}", "A") for i in range(4)]
    messages = [m for item in items for m in pairwise.both_orders_messages(template, item)]
    replies = judge_prompts(settings_for(chat_server), messages, parse_preference)
    picks = [v.values[0] for v in replies]
    verdicts = [pairwise.verdict_from_picks(picks[2 * i], picks[2 * i + 1]) for i in range(len(items))]
    stats = pairwise.pairwise_statistics(items, verdicts)
    assert stats["position_bias"] == 1.0 and stats["self_consistency"] == 0.0
    assert stats["agreement_with_humans"] == 0.0
