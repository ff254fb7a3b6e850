"""Driving the survey link as an annotator does: the start page (GET), then Start (a POST)."""

import re

TASK_URL_RE = re.compile(r"^/a/[\w-]+/$")


def start_task(client, survey, worker="", **extra):
    """Press Start on the survey's link (as `worker`, a new identity's label, unless the client's
    cookie already names one) and return the address of the task it was given."""
    response = client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker}, **extra)
    assert response.status_code == 302, response.content[:400]
    location = response["Location"]
    assert TASK_URL_RE.match(location), location
    return location


def task_page(client, survey, worker=""):
    """Start a task and return its page (the response of the GET the redirect leads to)."""
    return client.get(start_task(client, survey, worker))
