"""ExternalQuestion XML, fees and request tokens: pure functions, no database."""

import pytest

from annotation.crowd.mturk.pure import (
    EXTERNAL_QUESTION_NS,
    QuestionError,
    cost_estimate,
    dollars,
    external_question_xml,
    parse_external_question,
    request_token,
)


def test_external_question_round_trips_url_and_frame_height():
    document = external_question_xml(url="https://ratelab.example.org/mturk/abc/", frame_height=800)
    assert EXTERNAL_QUESTION_NS in document
    assert parse_external_question(document) == ("https://ratelab.example.org/mturk/abc/", 800)


def test_external_question_escapes_ampersands_in_the_url():
    document = external_question_xml(url="https://x.example.org/t/?a=1&b=2", frame_height=0)
    assert "&amp;" in document
    assert parse_external_question(document)[0] == "https://x.example.org/t/?a=1&b=2"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (external_question_xml(url="http://insecure.example.org/t/", frame_height=0), "https"),
        (
            '<ExternalQuestion xmlns="urn:wrong"><ExternalURL>https://a.org/</ExternalURL>'
            "<FrameHeight>0</FrameHeight></ExternalQuestion>",
            "namespace",
        ),
        (
            f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}"><FrameHeight>0</FrameHeight>'
            "<ExternalURL>https://a.org/</ExternalURL></ExternalQuestion>",
            "exactly",
        ),
        (
            f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}"><ExternalURL>https://a.org/</ExternalURL>'
            "<FrameHeight>tall</FrameHeight></ExternalQuestion>",
            "integer",
        ),
        (external_question_xml(url="https://a.org/", frame_height=20_000), "between"),
        ("<ExternalQuestion", "well-formed"),
    ],
)
def test_external_question_validation_refuses_documents_outside_the_schema(document, problem):
    with pytest.raises(QuestionError, match=problem):
        parse_external_question(document)


def test_fee_is_20_percent_below_ten_assignments():
    estimate = cost_estimate(n_hits=10, assignments_per_hit=3, reward_cents=50)
    assert estimate["assignments"] == 30
    assert estimate["rewards_cents"] == 1500
    assert estimate["fees_cents"] == 300
    assert estimate["total_cents"] == 1800
    assert estimate["fee_rate"] == 0.2


def test_fee_is_40_percent_from_ten_assignments_per_hit():
    estimate = cost_estimate(n_hits=2, assignments_per_hit=10, reward_cents=50)
    assert estimate["fees_cents"] == 2 * 10 * 20
    assert estimate["total_cents"] == 1000 + 400


def test_fee_is_at_least_one_cent_per_assignment():
    assert cost_estimate(n_hits=1, assignments_per_hit=5, reward_cents=2)["fees_cents"] == 5


def test_dollars_formats_cents_as_mturk_money():
    assert dollars(50) == "0.50"
    assert dollars(1234) == "12.34"


def test_request_token_is_stable_short_and_distinct():
    first = request_token("hit", "survey-token", 7, "sandbox")
    assert first == request_token("hit", "survey-token", 7, "sandbox")
    assert len(first) <= 64
    assert first != request_token("hit", "survey-token", 8, "sandbox")
    assert first != request_token("hit", "survey-token", 7, "live")
