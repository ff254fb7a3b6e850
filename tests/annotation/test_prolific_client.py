"""The Prolific client against Prolific's documented answers: token, refusals, rate limits, timeouts."""

import httpx
import pytest

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.api import PaymentOutcomeUnknown, ProlificClient
from tests.annotation.prolific_helpers import API, STUDY_ID, TOKEN


def test_every_request_carries_the_token_header_and_goes_to_the_configured_url(api):
    route = api.get("users/me/").mock(return_value=httpx.Response(200, json={"id": "researcher-1"}))
    assert ProlificClient().me() == {"id": "researcher-1"}
    assert route.calls.last.request.headers["Authorization"] == f"Token {TOKEN}"
    assert str(route.calls.last.request.url) == "https://prolific.test/api/v1/users/me/"


def test_a_missing_token_is_refused_before_any_request(monkeypatch, settings):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    with pytest.raises(ProviderError, match="PROLIFIC_API_TOKEN is not set"):
        ProlificClient()


def test_a_401_says_the_token_was_refused_without_showing_it(api):
    api.get("users/me/").mock(
        return_value=httpx.Response(401, json={"error": {"status": 401, "detail": "Invalid token."}})
    )
    with pytest.raises(ProviderError) as refused:
        ProlificClient().me()
    assert "401" in str(refused.value) and "PROLIFIC_API_TOKEN" in str(refused.value)
    assert TOKEN not in str(refused.value)


def test_a_422_passes_on_prolifics_own_explanation(api):
    detail = {"total_available_places": ["You can only increase the number of places."]}
    api.patch(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(422, json={"error": {"status": 422, "error_code": 140100, "detail": detail}})
    )
    with pytest.raises(ProviderError, match="only increase the number of places"):
        ProlificClient().set_places(STUDY_ID, 3)


def test_a_429_is_retried_after_the_seconds_retry_after_asks_for(api):
    route = api.get("users/me/").mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"detail": "Throttled"}}),
            httpx.Response(200, json={"id": "researcher-1"}),
        ]
    )
    slept = []
    assert ProlificClient(sleep=slept.append).me()["id"] == "researcher-1"
    assert slept == [7.0] and route.call_count == 2


def test_a_429_that_persists_ends_in_a_clear_refusal(api):
    api.get("users/me/").mock(return_value=httpx.Response(429, headers={"Retry-After": "1"}))
    with pytest.raises(ProviderError, match="too many requests"):
        ProlificClient(sleep=lambda s: None, attempts=2).me()


def test_a_read_that_times_out_is_tried_again(api):
    route = api.get("users/me/").mock(side_effect=[httpx.ReadTimeout("slow"), httpx.Response(200, json={"id": "r"})])
    assert ProlificClient().me() == {"id": "r"}
    assert route.call_count == 2


def test_a_pay_call_that_times_out_is_never_repeated(api):
    route = api.post("bulk-bonus-payments/bulk-1/pay/").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(PaymentOutcomeUnknown):
        ProlificClient().pay_bonus("bulk-1")
    assert route.call_count == 1


def test_submissions_follow_prolifics_next_links(api):
    first = {"results": [{"id": "s1"}], "_links": {"next": {"href": f"studies/{STUDY_ID}/submissions/?page=2"}}}
    second = {"results": [{"id": "s2"}], "_links": {"next": {"href": None}}}
    page_two = api.get(f"studies/{STUDY_ID}/submissions/", params={"page": "2"})
    page_two.mock(return_value=httpx.Response(200, json=second))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=first))
    assert [row["id"] for row in ProlificClient().submissions(STUDY_ID)] == ["s1", "s2"]


def test_the_token_appears_in_no_log_line_even_when_debug_logging_is_on(api, caplog):
    api.get("users/me/").mock(return_value=httpx.Response(401, json={"error": {"detail": "Invalid token."}}))
    # Settings quieten httpx to warnings (the judges' SDK logs a line per request); a debugging operator
    # may turn it back up, and even then the token must not appear.
    with (
        caplog.at_level("DEBUG"),
        caplog.at_level("DEBUG", logger="httpx"),
        caplog.at_level("DEBUG", logger="httpcore"),
        pytest.raises(ProviderError),
    ):
        ProlificClient().me()
    assert caplog.records, "httpx logged the request"
    assert TOKEN not in caplog.text


@pytest.mark.parametrize(
    "following",
    [
        "https://evil.example/api/v1/studies/s/submissions/?page=2",  # another host: would get the token
        "http://prolific.test/api/v1/studies/s/submissions/?page=2",  # plain http: the token in clear text
        "https://prolific.test:8443/api/v1/studies/s/submissions/?page=2",
    ],
)
def test_a_next_link_to_the_api_path_elsewhere_is_read_from_the_configured_api_only(api, following):
    # respx refuses any request it has no route for: a request to the link's own origin would fail
    first = {"results": [{"id": "s1"}], "_links": {"next": {"href": following}}}
    second = {"results": [{"id": "s2"}], "_links": {"next": {"href": None}}}
    api.get("studies/s/submissions/", params={"page": "2"}).mock(return_value=httpx.Response(200, json=second))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=first))
    assert [row["id"] for row in ProlificClient().submissions(STUDY_ID)] == ["s1", "s2"]
    assert [str(call.request.url).startswith(API) for call in api.calls] == [True, True]
    assert all(call.request.headers["Authorization"] == f"Token {TOKEN}" for call in api.calls)


@pytest.mark.parametrize("following", ["https://evil.example/collect?page=2", "http://evil.example/?page=2"])
def test_a_next_link_elsewhere_off_prolifics_api_path_is_not_followed(api, following):
    first = {"results": [{"id": "s1"}], "_links": {"next": {"href": following}}}
    listed = api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=first))
    with pytest.raises(ProviderError, match="not on Prolific's API"):
        ProlificClient().submissions(STUDY_ID)
    assert listed.call_count == 1 and len(api.calls) == 1


def test_an_absolute_next_link_on_prolifics_api_is_followed(api):
    first = {"results": [{"id": "s1"}], "_links": {"next": {"href": f"{API}studies/{STUDY_ID}/submissions/?page=2"}}}
    second = {"results": [{"id": "s2"}], "_links": {"next": {"href": None}}}
    api.get(f"studies/{STUDY_ID}/submissions/", params={"page": "2"}).mock(
        return_value=httpx.Response(200, json=second)
    )
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=first))
    assert [row["id"] for row in ProlificClient().submissions(STUDY_ID)] == ["s1", "s2"]


def test_a_next_link_that_leads_back_to_a_page_already_read_ends_with_a_message(api):
    looping = {"results": [{"id": "s1"}], "_links": {"next": {"href": f"studies/{STUDY_ID}/submissions/"}}}
    listed = api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=looping))
    with pytest.raises(ProviderError, match="already read"):
        ProlificClient().submissions(STUDY_ID)
    assert listed.call_count == 1
