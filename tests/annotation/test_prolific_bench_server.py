"""bench/prolific_server.py plays Prolific's participant side over HTTP too, returns included."""

import httpx
import pytest

from bench.prolific_server import serve

TOKEN = "bench-token-not-a-secret"


@pytest.fixture
def server():
    server, state = serve(TOKEN)
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()


def api(base, method, path, **kwargs):
    return httpx.request(method, f"{base}/api/v1/{path}", headers={"Authorization": f"Token {TOKEN}"}, **kwargs)


def published_study(base):
    url = "https://ratelab.example.org/p/tok/?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    body = {
        "name": "s",
        "external_study_url": url,
        "reward": 200,
        "total_available_places": 2,
        "completion_codes": [{"code": "C0DE", "code_type": "COMPLETED"}],
    }
    study = api(base, "POST", "studies/", json=body).json()
    api(base, "POST", f"studies/{study['id']}/transition/", json={"action": "PUBLISH"})
    return study["id"]


def test_a_browser_starts_returns_and_completes_as_a_participant(server):
    base, _ = server
    study = published_study(base)
    start = httpx.get(f"{base}/participant/start", params={"study": study, "PROLIFIC_PID": "5f" + "1" * 22})
    session = start.headers["X-Prolific-Session"]
    assert start.status_code == 302
    assert start.headers["Location"] == (
        f"https://ratelab.example.org/p/tok/?PROLIFIC_PID={'5f' + '1' * 22}&STUDY_ID={study}&SESSION_ID={session}"
    )
    assert httpx.get(f"{base}/participant/return", params={"session": session}).json() == {"status": "RETURNED"}
    listed = api(base, "GET", f"studies/{study}/submissions/").json()["results"]
    assert [(row["id"], row["status"]) for row in listed] == [(session, "RETURNED")]
    again = httpx.get(f"{base}/participant/return", params={"session": session})
    assert again.status_code == 400 and "RETURNED, not ACTIVE" in again.json()["error"]["detail"]

    other = httpx.get(f"{base}/participant/start", params={"study": study, "PROLIFIC_PID": "5f" + "2" * 22})
    second = other.headers["X-Prolific-Session"]
    done = httpx.get(f"{base}/participant/complete", params={"session": second, "cc": "C0DE", "seconds": "300"})
    assert done.json() == {"status": "AWAITING REVIEW", "known_code": True}
    row = api(base, "GET", f"submissions/{second}/").json()
    assert (row["status"], row["time_taken"], row["study_code"]) == ("AWAITING REVIEW", 300, "C0DE")


def test_the_participant_side_names_what_is_wrong_in_a_bad_request(server):
    base, _ = server
    missing = httpx.get(f"{base}/participant/start", params={"study": "nope", "PROLIFIC_PID": "x"})
    assert missing.status_code == 400 and "nope" in missing.json()["error"]["detail"]
    assert httpx.get(f"{base}/participant/elsewhere").status_code == 404


def test_a_full_study_starts_no_one_until_a_rejection_gives_a_place_back(server):
    base, _ = server
    study = published_study(base)  # 2 places

    def start(n):
        return httpx.get(f"{base}/participant/start", params={"study": study, "PROLIFIC_PID": f"5f{n:022d}"})

    sessions = [start(n).headers["X-Prolific-Session"] for n in (1, 2)]
    full = start(3)
    assert full.status_code == 400 and "full: 2 of 2 places taken" in full.json()["error"]["detail"]
    for session in sessions:
        httpx.get(f"{base}/participant/complete", params={"session": session, "cc": "C0DE"})
    message = "You answered every item with the same score, including the check that asked for a 2. " * 2
    rejected = api(
        base, "POST", f"submissions/{sessions[0]}/transition/", json={"action": "REJECT", "message": message}
    )
    assert rejected.json()["status"] == "REJECTED"
    assert start(3).status_code == 302


def test_the_account_lists_its_studies_with_their_internal_names_and_the_workspace_its_currency():
    server, _ = serve(TOKEN, currency="USD")
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert api(base, "GET", "studies/").json()["results"] == []
        body = {"name": "s", "internal_name": "RateLab survey 7 (0a1b2c3d4e): s", "external_study_url": "https://x/",
                "reward": 134, "total_available_places": 2}  # fmt: skip
        made = api(base, "POST", "studies/", json=body).json()
        listed = api(base, "GET", "studies/").json()
        assert [(row["id"], row["internal_name"], row["status"]) for row in listed["results"]] == [
            (made["id"], "RateLab survey 7 (0a1b2c3d4e): s", "UNPUBLISHED")
        ]
        assert api(base, "GET", "workspaces/ws-1/balance/").json()["currency_code"] == "USD"
        # the documented status filter
        drafts = api(base, "GET", "studies/", params={"state": "(UNPUBLISHED)"}).json()["results"]
        active = api(base, "GET", "studies/", params={"state": "(ACTIVE|PAUSED)"}).json()["results"]
        assert ([row["id"] for row in drafts], active) == ([made["id"]], [])
    finally:
        server.shutdown()
