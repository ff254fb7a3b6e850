"""Driving the survey link as an annotator does: the start page (GET), then Start (a POST)."""

import re

TASK_URL_RE = re.compile(r"^/a/[\w-]+/$")


# The task form's address on a task page (Start answers with the page itself, not a redirect).
TASK_FORM_RE = re.compile(r'<form method="post" action="(/a/[\w-]+/)" id="task-form"')


def started_task(response):
    """The address of the task a press of Start was given: Start answers with that task's page
    (200), whose form posts to the task's own address (task.js puts it in the address bar)."""
    assert response.status_code == 200, (response.status_code, response.content[:400])
    found = TASK_FORM_RE.search(response.content.decode())
    assert found, response.content[:400]
    return found.group(1)


def start_task(client, survey, worker="", **extra):
    """Press Start on the survey's link (as `worker`, a new identity's label, unless the client's
    cookie already names one) and return the address of the task it was given."""
    response = client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker}, **extra)
    location = started_task(response)
    assert TASK_URL_RE.match(location), location
    return location


def task_page(client, survey, worker=""):
    """Start a task and return its page (the response of the GET the redirect leads to)."""
    return client.get(start_task(client, survey, worker))
