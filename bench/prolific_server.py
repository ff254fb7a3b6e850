"""A small Prolific-compatible HTTP server for staging runs (`PROLIFIC_API_URL=http://127.0.0.1:<port>/api/v1/`).

It answers the documented requests of Prolific's API (https://docs.prolific.com/api-reference) with
the documented shapes, keeps its state in memory, and plays Prolific's participant side too: a
participant "starts" the study (Prolific makes a submission and sends them to the study URL with
the placeholders filled in) and comes back through the completion URL with a code (the
submission waits for review, its `time_taken` measured). It knows nothing of RateLab's client.

    python bench/prolific_server.py --port 8899      # serve until interrupted

A browser plays a participant through `GET /participant/start?study=ID&PROLIFIC_PID=PID` (a redirect
to the study URL, its session id in `X-Prolific-Session`), `/participant/return?session=ID` and
`/participant/complete?session=ID&cc=CODE[&seconds=N]`.
"""

import argparse
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

TOKEN_HEADER = "Authorization"
FEE_RATE = 0.426  # Prolific's service fee on rewards (about 42.6% incl. VAT for a UK account)


PLACE_GIVEN_BACK = {"RETURNED", "TIMED-OUT", "REJECTED"}


def _hex_id():
    return secrets.token_hex(12)


class ProlificState:
    def __init__(self, token, currency="GBP"):
        self.token = token
        self.currency = currency  # the workspace's: every study is paid in it
        self.lock = threading.Lock()
        self.studies = {}
        self.submissions = {}
        self.bulk_bonuses = {}
        self.groups = {}
        self.requests = []  # (method, path) of every API request, in order

    # --- participant side (what Prolific's web app does) ---------------------------------
    def participant_start(self, study_id, participant_id):
        """A participant presses Start on Prolific: a submission, and the study URL to open."""
        with self.lock:
            study = self.studies[study_id]
            if study["status"] != "ACTIVE":
                raise ValueError(f"study {study_id} is {study['status']}, not ACTIVE")
            blocked = {
                pid
                for entry in study.get("filters") or []
                if entry.get("filter_id") == "participant_group_blocklist"
                for group in entry.get("selected_values", [])
                for pid in self.groups.get(group, {}).get("participants", [])
            }
            if participant_id in blocked:
                raise PermissionError(f"{participant_id} is in a block-list group of study {study_id}")
            # Returned, timed-out and rejected submissions give their place back (Prolific's
            # submission statuses); every other one holds it.
            taken = sum(
                1
                for sub in self.submissions.values()
                if sub["study_id"] == study_id and sub["status"] not in PLACE_GIVEN_BACK
            )
            if taken >= study["total_available_places"]:
                raise ValueError(f"study {study_id} is full: {taken} of {study['total_available_places']} places taken")
            session_id = _hex_id()
            self.submissions[session_id] = {
                "id": session_id,
                "participant_id": participant_id,
                "study_id": study_id,
                "status": "ACTIVE",
                "started_at": time.time(),
                "time_taken": None,
                "study_code": None,
                "bonus_payments": [],
            }
            url = study["external_study_url"]
            for name, value in (("PROLIFIC_PID", participant_id), ("STUDY_ID", study_id), ("SESSION_ID", session_id)):
                url = url.replace("{{%" + name + "%}}", value)
            return session_id, url

    def participant_return(self, session_id):
        """The participant presses "Return submission" on Prolific: the place is free again."""
        with self.lock:
            submission = self.submissions[session_id]
            if submission["status"] != "ACTIVE":
                raise ValueError(f"submission {session_id} is {submission['status']}, not ACTIVE")
            submission["status"] = "RETURNED"

    def participant_complete(self, session_id, code, *, seconds=None):
        """The participant lands on app.prolific.com/submissions/complete?cc=<code>."""
        with self.lock:
            submission = self.submissions[session_id]
            study = self.studies[submission["study_id"]]
            known = {entry["code"] for entry in study["completion_codes"]}
            submission["study_code"] = code
            submission["status"] = "AWAITING REVIEW"  # an unknown code is still reviewed by hand
            submission["time_taken"] = int(seconds if seconds is not None else time.time() - submission["started_at"])
            return code in known


class Handler(BaseHTTPRequestHandler):
    state: ProlificState = None  # set by serve()

    def log_message(self, *args):  # quiet: the caller prints what it wants
        return

    def _send(self, status, body=None):
        raw = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}") if length else {}

    def _participant(self):
        """Prolific's participant side over HTTP, so a browser can play a participant against a
        standalone server: /participant/start?study=ID&PROLIFIC_PID=PID redirects to the study URL
        with the placeholders filled in; /participant/return?session=ID and
        /participant/complete?session=ID&cc=CODE&seconds=N do what the participant's buttons do."""
        url = urlparse(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        try:
            if url.path == "/participant/start":
                session_id, target = self.state.participant_start(query["study"], query["PROLIFIC_PID"])
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("X-Prolific-Session", session_id)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if url.path == "/participant/return":
                self.state.participant_return(query["session"])
                return self._send(200, {"status": "RETURNED"})
            if url.path == "/participant/complete":
                seconds = int(query["seconds"]) if query.get("seconds") else None
                known = self.state.participant_complete(query["session"], query["cc"], seconds=seconds)
                return self._send(200, {"status": "AWAITING REVIEW", "known_code": known})
        except (KeyError, ValueError, PermissionError) as error:
            return self._send(400, {"error": {"detail": str(error)}})
        return self._send(404, {"error": {"detail": "Not found."}})

    def _route(self, method):
        path = urlparse(self.path).path
        if method == "GET" and path.startswith("/participant/"):
            return self._participant()
        if not path.startswith("/api/v1/"):
            return self._send(404, {"error": {"detail": "Not found."}})
        if self.headers.get(TOKEN_HEADER) != f"Token {self.state.token}":
            return self._send(401, {"error": {"detail": "Invalid token."}})
        parts = [p for p in path[len("/api/v1/") :].split("/") if p]
        self.state.requests.append((method, "/".join(parts)))
        with self.state.lock:
            return self._dispatch(method, parts)

    def _dispatch(self, method, parts):  # one branch per documented call
        s = self.state
        if parts == ["users", "me"] and method == "GET":
            return self._send(200, {"id": "researcher-1", "email": "lab@example.org", "currency_code": "GBP"})
        if parts == ["studies"] and method == "POST":
            body = self._body()
            missing = [
                key for key in ("name", "external_study_url", "reward", "total_available_places") if key not in body
            ]
            if missing:
                return self._send(400, {"error": {"detail": f"missing fields: {', '.join(missing)}"}})
            study = {**body, "id": _hex_id(), "status": "UNPUBLISHED"}
            s.studies[study["id"]] = study
            return self._send(201, study)
        if parts == ["studies"] and method == "GET":
            # the documented filter: ?state=(UNPUBLISHED|ACTIVE|...)
            wanted = parse_qs(urlparse(self.path).query).get("state", [""])[0].strip("()")
            states = set(wanted.split("|")) if wanted else None
            rows = [
                {key: study.get(key) for key in ("id", "name", "internal_name", "status", "total_available_places")}
                for study in s.studies.values()
                if states is None or study.get("status") in states
            ]
            return self._send(200, {"results": rows, "_links": {"next": {"href": None}}})
        if len(parts) == 3 and parts[0] == "workspaces" and parts[2] == "balance" and method == "GET":
            return self._send(200, {"currency_code": s.currency, "total_balance": 10**7, "available_balance": 10**7})
        if parts == ["study-cost-calculator"] and method == "POST":
            body = self._body()
            total = body["reward"] * body["total_available_places"] * (1 + FEE_RATE)
            return self._send(200, {"total_cost": round(total, 2)})
        if len(parts) == 2 and parts[0] == "studies" and parts[1] in s.studies:
            study = s.studies[parts[1]]
            if method == "GET":
                return self._send(200, study)
            if method == "PATCH":
                places = self._body().get("total_available_places", study["total_available_places"])
                if places < study["total_available_places"]:
                    return self._send(400, {"error": {"detail": "Places can only increase."}})
                study["total_available_places"] = places
                return self._send(200, study)
        if len(parts) == 3 and parts[0] == "studies" and parts[1] in s.studies:
            study = s.studies[parts[1]]
            if parts[2] == "transition" and method == "POST":
                action = self._body().get("action")
                moves = {"PUBLISH": "ACTIVE", "START": "ACTIVE", "PAUSE": "PAUSED", "STOP": "COMPLETED"}
                if action not in moves:
                    return self._send(422, {"error": {"detail": f"Unknown action {action!r}."}})
                study["status"] = moves[action]
                return self._send(200, study)
            if parts[2] == "submissions" and method == "GET":
                rows = [dict(sub) for sub in s.submissions.values() if sub["study_id"] == study["id"]]
                return self._send(200, {"results": rows, "_links": {"next": {"href": None}}})
        if len(parts) == 2 and parts[0] == "submissions" and parts[1] in s.submissions and method == "GET":
            return self._send(200, s.submissions[parts[1]])
        if len(parts) == 3 and parts[0] == "submissions" and parts[2] == "transition" and method == "POST":
            submission = s.submissions.get(parts[1])
            body = self._body()
            if submission is None:
                return self._send(404, {"error": {"detail": "No such submission."}})
            if body.get("action") == "REJECT" and len(body.get("message", "")) < 100:
                return self._send(400, {"error": {"detail": "A rejection message needs 100 characters."}})
            submission["status"] = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}[body["action"]]
            return self._send(200, submission)
        if parts == ["submissions", "bonus-payments"] and method == "POST":
            body = self._body()
            bulk = {"id": _hex_id(), "study_id": body["study_id"], "csv_bonuses": body["csv_bonuses"], "paid": False}
            s.bulk_bonuses[bulk["id"]] = bulk
            return self._send(201, {"id": bulk["id"], "study": body["study_id"], "total_amount": 0})
        if len(parts) == 3 and parts[0] == "bulk-bonus-payments" and parts[2] == "pay" and method == "POST":
            bulk = s.bulk_bonuses[parts[1]]
            for line in bulk["csv_bonuses"].strip().splitlines():  # not idempotent, as documented
                participant, amount = line.split(",")
                for sub in s.submissions.values():
                    if sub["participant_id"] == participant and sub["study_id"] == bulk["study_id"]:
                        sub["bonus_payments"].append(round(float(amount) * 100))
            bulk["paid"] = True
            return self._send(202, {})
        if parts == ["participant-groups"] and method == "POST":
            body = self._body()
            if not (body.get("workspace_id") or body.get("organisation_id")):
                return self._send(400, {"error": {"detail": "workspace_id or organisation_id is required."}})
            group = {
                "id": _hex_id(),
                "name": body["name"],
                "workspace_id": body.get("workspace_id"),
                "participants": list(body.get("participant_ids") or []),
            }
            s.groups[group["id"]] = group
            return self._send(
                201, {"id": group["id"], "name": group["name"], "participant_count": len(group["participants"])}
            )
        if parts == ["participant-groups"] and method == "GET":
            workspace = parse_qs(urlparse(self.path).query).get("filter[workspace_id]", [None])[0]
            if not workspace:
                return self._send(400, {"error": {"detail": "filter[workspace_id] is required."}})
            rows = [
                {
                    "id": g["id"],
                    "name": g["name"],
                    "workspace_id": g["workspace_id"],
                    "is_deleted": False,
                    "participant_count": len(g["participants"]),
                }
                for g in s.groups.values()
                if g["workspace_id"] == workspace
            ]
            return self._send(200, {"results": rows})
        if len(parts) == 3 and parts[0] == "participant-groups" and parts[2] == "participants" and method == "POST":
            group = s.groups.get(parts[1])
            if group is None:
                return self._send(404, {"error": {"detail": "No such group."}})
            for pid in self._body().get("participant_ids") or []:
                if pid not in group["participants"]:
                    group["participants"].append(pid)
            return self._send(200, {"results": [{"participant_id": pid} for pid in group["participants"]]})
        return self._send(404, {"error": {"detail": f"{method} {'/'.join(parts)} is not a documented call."}})

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PATCH(self):
        self._route("PATCH")


def serve(token, port=0, currency="GBP"):
    """Start the server in a thread; returns (server, state). `server.server_address[1]` is the port."""
    state = ProlificState(token, currency)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, state


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8899)
    parser.add_argument("--token", default="staging-token")
    parser.add_argument("--currency", default="GBP", choices=("GBP", "USD"), help="the workspace's currency")
    args = parser.parse_args()
    server, _ = serve(args.token, args.port, args.currency)
    print(
        f"Prolific-compatible server on http://127.0.0.1:{args.port}/api/v1/ (token {args.token!r}); "
        f"participants start at http://127.0.0.1:{args.port}/participant/start?study=ID&PROLIFIC_PID=PID. "
        "Ctrl-C stops it."
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
