"""The task page in real headless Chromium, framed by (a stand-in for) MTurk's worker site.

MTurk's sites are served by Playwright's request routing (no network): the parent page frames the
task page like MTurk does, and the externalSubmit POST is caught to see what MTurk would receive.
The app is reached as https://ratelab.test (routed to the live test server, headers and all), as
MTurk requires an https ExternalURL.
"""

from urllib.parse import parse_qs

import pytest
from django.urls import reverse

from annotation.models import Assignment, Rating
from tests.annotation.mturk_helpers import make_survey

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SANDBOX = "https://workersandbox.mturk.com"
APP = "https://ratelab.test"


def open_page(browser, live_server):
    page = browser.new_page()
    page.route(
        f"{APP}/**",
        lambda route: route.fulfill(response=route.fetch(url=route.request.url.replace(APP, live_server.url))),
    )
    return page


def test_a_worker_rates_inside_mturks_frame_and_the_assignment_goes_back_to_mturk(browser, live_server, researcher):
    survey = make_survey(researcher, n_hits=1)
    hit = survey.hits.get()
    hit.external_id = "3HIT" + "0" * 26
    hit.save()
    query = f"assignmentId=3ASGBROWSER&hitId={hit.external_id}&workerId=AWORKERB&turkSubmitTo={SANDBOX}"
    task_url = f"{APP}{reverse('annotation:mturk_task', args=[survey.token])}?{query}"
    submitted = []

    page = open_page(browser, live_server)

    def mturk_site(route):
        request = route.request
        if request.url.endswith("/mturk/externalSubmit"):
            submitted.append(parse_qs(request.post_data))
            route.fulfill(status=200, content_type="text/html", body="<p id='done'>HIT submitted</p>")
        else:
            route.fulfill(status=200, content_type="text/html", body=f'<iframe id="task" src="{task_url}"></iframe>')

    page.route(f"{SANDBOX}/**", mturk_site)
    page.goto(f"{SANDBOX}/projects/GROUP/tasks")
    frame = page.frame_locator("#task")
    radios = frame.locator("fieldset")
    radios.first.wait_for()
    for index in range(radios.count()):
        fieldset = radios.nth(index)
        value = "2" if "choose 2" in fieldset.locator("xpath=..").inner_text() else "4"
        fieldset.locator(f"input[value='{value}']").check()
    frame.get_by_role("button", name="Submit").click()
    frame.locator("#done").wait_for()

    assert submitted == [{"assignmentId": ["3ASGBROWSER"], "ratelab": ["stored"]}]
    slot = Assignment.objects.get(external_id="3ASGBROWSER")
    assert slot.status == Assignment.Status.SUBMITTED
    assert sorted(Rating.objects.filter(assignment=slot).values_list("score", flat=True)) == [4, 4]
    assert all(seconds is not None and seconds > 0 for seconds in Rating.objects.values_list("seconds", flat=True))


def test_a_site_other_than_mturk_cannot_frame_the_task_page(browser, live_server, researcher):
    survey = make_survey(researcher, n_hits=1)
    task_url = f"{APP}{reverse('annotation:mturk_task', args=[survey.token])}"
    page = open_page(browser, live_server)
    page.route(
        "https://evil.example.com/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=f'<iframe src="{task_url}"></iframe>'),
    )
    page.goto("https://evil.example.com/")
    page.wait_for_timeout(1000)
    framed = [frame for frame in page.frames if frame != page.main_frame]
    assert framed, "the iframe element exists"
    assert "Rate replies" not in framed[0].content()
