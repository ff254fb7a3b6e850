"""Start pressed twice by a browser without an identity (two tabs, or a second press sent before the
first's answer set the cookie) makes one annotator, not two: the start page's form carries a resume
code of the server's choosing, bound to the identity the first press makes."""

import re
import threading

import pytest
from django.db import connection, connections
from django.test import Client, RequestFactory

from annotation.models import Annotator, Assignment, LinkIdentity
from annotation.services.identities import resume_code_hash
from annotation.views.task_identity import START_COOKIE, WORKER_COOKIE, WORKER_SALT
from tests.annotation.link_helpers import started_task
from tests.annotation.studies_helpers import make_survey

START_RE = re.compile(r'name="start" value="([^"]+)"')
RESUME_RE = re.compile(r"Your resume code: <strong>([a-z0-9-]+)</strong>")


def _identity(response_or_client):
    """What the identity cookie says (worker id and resume code). The cookie itself also carries
    the second it was signed in, so two cookies of one identity differ across a second's turn."""
    request = RequestFactory().get("/")
    request.COOKIES[WORKER_COOKIE] = response_or_client.cookies[WORKER_COOKIE].value
    return request.get_signed_cookie(WORKER_COOKIE, salt=WORKER_SALT)


def _start_value(client, survey):
    page = client.get(f"/s/{survey.token}/")
    return START_RE.search(page.content.decode()).group(1)


def _press(client, survey, start, worker=""):
    """Press Start as a request sent before any earlier press's answer came back: no identity cookie."""
    client.cookies.pop(WORKER_COOKIE, None)
    response = client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker, "start": start})
    started_task(response)  # the task's page itself (status 200)
    return response


@pytest.mark.django_db
def test_a_second_press_sent_before_the_first_answer_gets_the_same_identity_and_task(researcher):
    survey = make_survey(researcher, assignments_per_hit=3)
    browser = Client()
    start = _start_value(browser, survey)
    first, second = _press(browser, survey, start), _press(browser, survey, start)
    assert Annotator.objects.count() == 1 and LinkIdentity.objects.count() == 1
    assert started_task(first) == started_task(second)
    assert Assignment.objects.filter(annotator__isnull=False).count() == 1
    # both answers give the browser the same identity, resume code included
    assert _identity(first) == _identity(second)


@pytest.mark.django_db
def test_two_tabs_of_a_browser_without_an_identity_press_start_as_one_annotator(researcher):
    survey = make_survey(researcher, assignments_per_hit=3)
    browser = Client()
    tab_one, tab_two = _start_value(browser, survey), _start_value(browser, survey)
    assert tab_one == tab_two  # the second tab's page read the code the first one's left in the cookie
    first = _press(browser, survey, tab_one, worker="ada")
    second = _press(browser, survey, tab_two, worker="ada")  # not "this identifier is already in use"
    assert list(Annotator.objects.values_list("worker_id", flat=True)) == ["ada"]
    assert started_task(first) == started_task(second)


@pytest.mark.django_db
def test_the_identity_keeps_the_code_its_start_page_carried_as_its_resume_code(researcher):
    survey = make_survey(researcher, assignments_per_hit=3)
    browser = Client()
    start = _start_value(browser, survey)
    task = _press(browser, survey, start).content.decode()  # Start answers with the task page
    code = RESUME_RE.search(task).group(1)
    elsewhere = Client()  # another device: the code resumes the same identity
    elsewhere.post(f"/s/{survey.token}/", {"action": "resume", "resume_code": code})
    assert _identity(elsewhere) == _identity(browser)


@pytest.mark.django_db
def test_the_second_press_is_no_newcomer_for_the_per_address_cap(researcher):
    survey = make_survey(researcher, assignments_per_hit=3, new_annotators_per_address_hour=1)
    browser = Client(REMOTE_ADDR="10.0.0.9")
    start = _start_value(browser, survey)
    _press(browser, survey, start)
    _press(browser, survey, start)  # would be refused (429) as a second newcomer from 10.0.0.9
    assert Annotator.objects.count() == 1


@pytest.mark.django_db
def test_different_browsers_get_different_codes_and_a_forged_code_is_ignored(researcher):
    survey = make_survey(researcher, assignments_per_hit=3)
    one, two = Client(), Client()
    assert _start_value(one, survey) != _start_value(two, survey)
    _press(one, survey, _start_value(one, survey))
    forged = "abcde-fghjk-mnpqr-stuvw"  # not signed by the server: a client cannot choose its code
    _press(two, survey, forged)
    _press(two, survey, "")  # an old page without the field still starts
    assert Annotator.objects.count() == 3
    assert not LinkIdentity.objects.filter(resume_code_hash=resume_code_hash(forged)).exists()


@pytest.mark.django_db
def test_once_the_browser_has_an_identity_the_start_code_is_dropped(researcher):
    survey = make_survey(researcher, assignments_per_hit=3)
    browser = Client()
    start = _start_value(browser, survey)
    pressed = _press(browser, survey, start)
    assert pressed.cookies[START_COOKIE].value == ""  # deleted
    assert 'name="start"' not in browser.get(f"/s/{survey.token}/").content.decode()
    # Its identity cookie cleared (another person at a shared computer): a new start page, a new code.
    browser.cookies.pop(WORKER_COOKIE)
    assert _start_value(browser, survey) != start


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_presses_with_one_code_make_one_identity_on_postgresql(researcher):
    if connection.vendor != "postgresql":
        pytest.skip("simultaneous requests need PostgreSQL (DATABASE_URL=postgres://...)")
    survey = make_survey(researcher, assignments_per_hit=3)
    start = _start_value(Client(), survey)
    barrier, answers, errors = threading.Barrier(4), [], []

    def press():
        try:
            barrier.wait()
            answers.append(Client().post(f"/s/{survey.token}/", {"action": "start", "start": start}))
        except Exception as error:  # reported below: an exception in a thread would pass unseen
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and [answer.status_code for answer in answers] == [200] * 4
    assert Annotator.objects.count() == 1 and len({started_task(answer) for answer in answers}) == 1


def _simultaneously(n, press):
    barrier, errors = threading.Barrier(n), []

    def run(index):
        try:
            barrier.wait()
            press(index)
        except Exception as error:  # reported below: an exception in a thread would pass unseen
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors


@pytest.mark.django_db(transaction=True)
def test_simultaneous_newcomers_from_one_address_stay_within_its_cap_on_postgresql(researcher):
    if connection.vendor != "postgresql":
        pytest.skip("simultaneous requests need PostgreSQL (DATABASE_URL=postgres://...)")
    survey = make_survey(researcher, assignments_per_hit=3, new_annotators_per_address_hour=2)
    answers = []

    def press(index):
        answers.append(Client(REMOTE_ADDR="198.51.100.7").post(f"/s/{survey.token}/", {"action": "start"}))

    _simultaneously(6, press)
    assert sorted(answer.status_code for answer in answers) == [200, 200, 429, 429, 429, 429]
    assert LinkIdentity.objects.filter(survey=survey, address="198.51.100.7").count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_newcomer_waits_only_for_newcomers_from_their_own_address_on_postgresql(researcher):
    """The newcomers' lock is per survey and address: a Start from one address is not held up while
    another address's newcomer is being recorded (fifty people arriving at once do not queue on one
    lock, as they did on the survey's row)."""
    if connection.vendor != "postgresql":
        pytest.skip("row and advisory locks need PostgreSQL (DATABASE_URL=postgres://...)")
    from django.db import transaction

    from annotation.services.identities import newcomer_cap_check

    survey = make_survey(researcher, assignments_per_hit=3)
    held, release = threading.Event(), threading.Event()

    def newcomer_being_recorded():
        try:
            with transaction.atomic():
                newcomer_cap_check(survey=survey, address="198.51.100.7", joined=LinkIdentity.objects.all())
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=newcomer_being_recorded)
    holder.start()
    try:
        assert held.wait(30)
        with connection.cursor() as cursor:  # a Start that would wait on a lock is refused instead
            cursor.execute("SET lock_timeout = '500ms'")
        other = Client(REMOTE_ADDR="203.0.113.9").post(f"/s/{survey.token}/", {"action": "start"})
        assert other.status_code == 200
        with pytest.raises(Exception, match="lock timeout"):  # the same address waits for it
            Client(REMOTE_ADDR="198.51.100.7").post(f"/s/{survey.token}/", {"action": "start"})
    finally:
        release.set()
        holder.join(30)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")
