"""The live chat effort rule (annotation/kinds/chat/effort_rule.py), pure: each figure and verdict
worked out by hand from a few messages."""

from annotation.kinds.chat.effort_rule import EffortRules, chat_effort, effort_reasons, mostly_pasted

MESSAGES = [
    ("hi", {"pasted_chars": 0, "idle_ms": 4_000}),  # 1 word: short
    ("what films do you like these days?", {"pasted_chars": 0, "idle_ms": 9_500}),
    ("ok sure", None),  # 2 words: short; sent without measures (not judged on paste or idle)
    ("I think the ending of that one was far too long", {"pasted_chars": 30, "idle_ms": 61_000}),  # 47 chars
    ("Tell me something about the history of cinema.", {"pasted_chars": 46, "idle_ms": 2_000}),  # 46 chars
]


def test_the_figures_of_a_chat_are_counted_as_by_hand():
    figures = chat_effort(MESSAGES)
    # short: "hi" (1 word) and "ok sure" (2) are under 3 words; 5 messages, 4 measured
    # pasted: 30 of 47 characters (≥ half) and 46 of 46; the first two pasted nothing
    # longest idle: max(4.0, 9.5, 61.0, 2.0) seconds over the measured messages
    assert figures == {"messages": 5, "short": 2, "measured": 4, "pasted": 2, "longest_idle_seconds": 61.0}


def test_mostly_pasted_means_half_of_the_characters_or_more():
    assert mostly_pasted("abcdefghij", 5) and not mostly_pasted("abcdefghij", 4)
    assert mostly_pasted("ab", 7)  # a paste trimmed afterwards counts whole
    assert not mostly_pasted("   ", 3)  # nothing written: nothing pasted


def test_a_chat_passing_each_threshold_is_left_out_with_the_measure_and_the_threshold():
    figures = chat_effort(MESSAGES)
    reasons = effort_reasons(figures, EffortRules(max_short_share=0.3, max_pasted_share=0.4, max_idle_seconds=60))
    assert [r["rule"] for r in reasons] == ["short", "pasted", "idle"]
    short, pasted, idle = reasons
    assert short["value"] == 2 / 5 and short["threshold"] == 0.3
    assert short["detail"] == "2 of 5 messages under 3 words (40%), above 0.3"
    assert pasted["value"] == 2 / 4 and pasted["detail"] == "2 of 4 measured messages mostly pasted (50%), above 0.4"
    assert idle["value"] == 61.0 and idle["detail"] == "61 s without typing while writing a message, above 60 s"


def test_a_chat_at_the_thresholds_is_kept_and_a_rule_left_empty_judges_nothing():
    figures = chat_effort(MESSAGES)
    # "more than" each threshold: 0.4 short, 0.5 pasted and 61 s idle are at them, not above
    assert effort_reasons(figures, EffortRules(max_short_share=0.4, max_pasted_share=0.5, max_idle_seconds=61)) == []
    assert effort_reasons(figures, EffortRules()) == [] and not EffortRules().on
    assert EffortRules(max_idle_seconds=30).on


def test_a_chat_without_measures_is_judged_on_its_words_only():
    figures = chat_effort([("ok", None), ("yes please", None), ("tell me a long story now", None)])
    assert figures == {"messages": 3, "short": 2, "measured": 0, "pasted": 0, "longest_idle_seconds": None}
    reasons = effort_reasons(figures, EffortRules(max_short_share=0.5, max_pasted_share=0.0, max_idle_seconds=1))
    assert [r["rule"] for r in reasons] == ["short"]
