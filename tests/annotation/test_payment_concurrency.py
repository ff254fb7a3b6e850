"""Two requests for one payment at the same instant (a double click, two tabs) on PostgreSQL.

Each request runs in its own thread with its own database connection, as two web workers would;
Prolific is faked by respx (which answers every thread), MTurk by botocore's Stubber.
"""

import threading
import time

import httpx
import pytest
from django.db import connection, connections

from annotation.models import Assignment, ProlificBonus, ReviewAction
from annotation.services.reviews import assignment_review
from tests.annotation.mturk_helpers import assignment_id
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    confirmed_assignment,
    make_prolific_survey,
    provider,
    publish,
)
from tests.annotation.test_mturk_review import submitted  # noqa: F401 (fixture: a confirmed MTurk submission)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL (DATABASE_URL=postgres://...)")


def at_once(*calls):
    """Run each call in its own thread, released together; returns what each returned or raised."""
    start = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, call):
        start.wait()
        try:
            outcomes[index] = call()
        except Exception as error:
            outcomes[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def test_one_prolific_bonus_form_sent_twice_at_once_pays_once(client, researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    slot = confirmed_assignment(client, survey, api)
    made = iter(range(1, 10))

    def set_up(request):
        time.sleep(0.2)  # both requests are past their row lookup before either saves a bulk id
        return httpx.Response(201, json={"id": f"bulk-{next(made)}", "study": STUDY_ID})

    api.post("submissions/bonus-payments/").mock(side_effect=set_up)
    paid = api.post(url__regex=r"bulk-bonus-payments/bulk-\d/pay/$").mock(return_value=httpx.Response(202, json={}))
    outcomes = at_once(
        *[lambda: provider().bonus(assignment=slot, amount_cents=50, reason="thanks", key="one-form")] * 2
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert paid.call_count == 1
    bonus = ProlificBonus.objects.get()
    assert bonus.paid_at is not None
    assert paid.calls.last.request.url.path.endswith(f"/{bonus.bulk_id}/pay/")


def test_two_approve_clicks_at_once_approve_once_on_mturk(stubber, submitted, researcher):  # noqa: F811
    _survey, slot = submitted

    def slow_approval(*args, **kwargs):
        time.sleep(0.2)  # the second click arrives while MTurk is answering the first

    stubber.add_response("approve_assignment", {}, {"AssignmentId": assignment_id(1)})
    stubber.client.meta.events.register_first("before-call.mturk.ApproveAssignment", slow_approval)
    outcomes = at_once(
        *[lambda: assignment_review(assignment=slot, action=ReviewAction.Action.APPROVE, actor=researcher)] * 2
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    slot.refresh_from_db()
    assert (slot.status, slot.external_status) == (Assignment.Status.APPROVED, "Approved")
    stubber.assert_no_pending_responses()  # one ApproveAssignment, and the stubber had no second answer
