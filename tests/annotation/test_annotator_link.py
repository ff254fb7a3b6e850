"""The survey link as annotators and intruders use it: a GET claims nothing, identities are resumed
only with their own cookie or resume code, new identities are capped per address, refusals name
the missing items, and a CSRF failure keeps the answers."""

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Annotator, Assignment, LinkIdentity, Rating
from tests.annotation.link_helpers import start_task, started_task
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db

RESUME_RE = re.compile(r"Your resume code: <strong>([a-z0-9-]+)</strong>")


def _fill(html, score=3):
    data = {name: str(score) for name in set(re.findall(r'name="(score-\d+-[\w-]+)"', html))}
    data.update({f"seconds-{item}": "2.0" for item in re.findall(r'name="seconds-(\d+)"', html)})
    return data


def _start(survey, worker="", address="127.0.0.1", **extra):
    client = Client(REMOTE_ADDR=address)
    return client, client.post(f"/s/{survey.token}/", {"action": "start", "worker": worker}, **extra)


def test_opening_the_link_claims_nothing_and_makes_no_identity(researcher):
    survey = make_survey(researcher)
    client = Client()
    for url in (f"/s/{survey.token}/", f"/s/{survey.token}/?worker=someone-1"):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 200 and "Start a task" in page
        # Three conversations of four replies and the instructed check's block of four.
        assert "16 replies" in page and "minute" in page, "the start page says the task's size and time"
        assert "ratelab_worker" not in response.cookies
    assert 'value="someone-1"' in page, "?worker= only fills in the label of a new identity"
    assert not Assignment.objects.exclude(status=Assignment.Status.OPEN).exists()
    assert not Annotator.objects.exists()


def test_naming_another_annotators_id_gets_neither_their_task_nor_their_cookie(researcher):
    survey = make_survey(researcher)
    _victim, started = _start(survey, "victim-77")
    victim_token = started_task(started).strip("/").rsplit("/", 1)[-1]

    attacker = Client()
    opened = attacker.get(f"/s/{survey.token}/?worker=victim-77")
    assert opened.status_code == 200 and victim_token not in opened.content.decode()
    assert "Continue your task" not in opened.content.decode() and "ratelab_worker" not in opened.cookies
    posted = attacker.post(f"/s/{survey.token}/", {"action": "start", "worker": "victim-77"})
    assert posted.status_code == 400 and "already in use" in posted.content.decode()
    assert "ratelab_worker" not in posted.cookies and victim_token not in posted.content.decode()
    assert attacker.get(f"/a/{victim_token}/").status_code == 403
    held = Assignment.objects.get(token=victim_token)
    assert held.status == Assignment.Status.ACTIVE and held.annotator.worker_id == "victim-77"
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_a_task_link_opened_in_another_browser_says_where_to_go_on_and_shows_nothing_of_the_task(researcher):
    """A worker who copies their task's link from the phone to the laptop is not told only "another
    annotator's": the page says how to carry on (the browser they started in, or the resume code on
    the study's start page) and links that page; it shows nothing of the task or its annotator."""
    survey = make_survey(researcher)
    phone, started = _start(survey, "phone-me")
    code = RESUME_RE.search(phone.get(started_task(started)).content.decode()).group(1)

    laptop = Client()
    refused = laptop.get(started_task(started))
    page = refused.content.decode()
    assert refused.status_code == 403 and "started in another browser or on another device" in page
    assert "resume code" in page
    assert f'href="/s/{survey.token}/"' in page
    assert "phone-me" not in page and code not in page and 'name="score-' not in page
    resumed = laptop.post(f"/s/{survey.token}/", {"action": "resume", "resume_code": code})
    assert "Continue your task" in laptop.get(resumed["Location"]).content.decode()
    assert laptop.get(started_task(started)).status_code == 200


def test_the_resume_code_continues_the_task_in_another_browser(researcher):
    survey = make_survey(researcher)
    first, started = _start(survey, "mobile-me")
    page = first.get(started_task(started)).content.decode()
    code = RESUME_RE.search(page).group(1)
    assert len(code.replace("-", "")) == 20
    assert LinkIdentity.objects.get().resume_code_hash != code, "only a digest is stored"

    other = Client()
    typed = code.upper().replace("-", " ")
    resumed = other.post(f"/s/{survey.token}/", {"action": "resume", "resume_code": typed})
    assert resumed.status_code == 302 and "ratelab_worker" in resumed.cookies
    start = other.get(f"/s/{survey.token}/").content.decode()
    assert "Continue your task" in start and started_task(started) in start and code in start
    assert other.get(started_task(started)).status_code == 200


def test_a_wrong_resume_code_is_refused_and_sets_no_cookie(researcher):
    survey = make_survey(researcher)
    _start(survey, "someone")
    response = Client().post(f"/s/{survey.token}/", {"action": "resume", "resume_code": "aaaaa-bbbbb-ccccc-ddddd"})
    assert response.status_code == 400 and "not known" in response.content.decode()
    assert "ratelab_worker" not in response.cookies


def test_the_cap_refuses_the_next_new_identity_from_one_address(researcher):
    survey = make_survey(researcher, assignments_per_hit=3, new_annotators_per_address_hour=3)
    returning = None
    for n in range(3):
        client, response = _start(survey, f"lab-{n}", address="10.0.0.1")
        assert response.status_code == 200
        returning = client
    _client, refused = _start(survey, "lab-3", address="10.0.0.1")
    assert refused.status_code == 429 and "Too many new annotators" in refused.content.decode()
    assert not Annotator.objects.filter(worker_id="lab-3").exists() and "ratelab_worker" not in refused.cookies
    assert _start(survey, "elsewhere", address="10.0.0.2")[1].status_code == 200, "the cap is per address"
    again = returning.post(f"/s/{survey.token}/", {"action": "start"})
    assert again.status_code == 200, "an annotator who has an identity is no new identity"


def test_the_cap_counts_an_ipv6_client_by_its_64_network_not_by_each_address(researcher):
    """A subscriber holds a whole /64: a new address from it for each identity must not slip past."""
    survey = make_survey(researcher, assignments_per_hit=3, new_annotators_per_address_hour=2)
    for n, address in enumerate(("2001:db8:1:2::1", "2001:db8:1:2:ffff:0:0:7")):
        assert _start(survey, f"v6-{n}", address=address)[1].status_code == 200
    _client, refused = _start(survey, "v6-2", address="2001:db8:1:2:abcd::99")
    assert refused.status_code == 429 and not Annotator.objects.filter(worker_id="v6-2").exists()
    assert _start(survey, "next-network", address="2001:db8:1:3::1")[1].status_code == 200
    assert set(survey.link_identities.values_list("address", flat=True)) == {"2001:db8:1:2::", "2001:db8:1:3::"}


def test_an_ipv4_client_on_a_dual_stack_socket_is_counted_as_its_ipv4_address(researcher):
    survey = make_survey(researcher, assignments_per_hit=3, new_annotators_per_address_hour=1)
    assert _start(survey, "mapped", address="::ffff:198.51.100.4")[1].status_code == 200
    assert _start(survey, "plain", address="198.51.100.4")[1].status_code == 429
    assert _start(survey, "other", address="::ffff:198.51.100.5")[1].status_code == 200, "not one shared ::ffff:0:0/64"


def test_the_address_comes_from_the_trusted_proxy_only_when_configured(researcher, settings):
    survey = make_survey(researcher)
    forwarded = {"HTTP_X_FORWARDED_FOR": "6.6.6.6, 10.1.2.3"}
    _start(survey, "direct", address="192.0.2.5", **forwarded)
    settings.TRUSTED_PROXY_COUNT = 1
    _start(survey, "proxied", address="192.0.2.5", **forwarded)
    addresses = dict(LinkIdentity.objects.values_list("annotator__worker_id", "address"))
    assert addresses == {"direct": "192.0.2.5", "proxied": "10.1.2.3"}


def test_reload_or_back_after_submitting_takes_no_new_task_until_asked(researcher):
    survey = make_survey(researcher)
    client, started = _start(survey, "w1")
    url = started_task(started)
    client.post(url, _fill(client.get(url).content.decode()))
    assert Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 1
    for again in (f"/s/{survey.token}/", url):
        client.get(again, follow=True)
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists(), "reload and Back claim nothing"
    done = client.get(f"{url}done/").content.decode()
    assert "Do another task" in done and f'action="/s/{survey.token}/"' in done and 'method="post"' in done
    another = client.post(f"/s/{survey.token}/", {"action": "start"})
    assert started_task(another) != url
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_a_submission_with_missing_items_names_and_marks_them(researcher):
    survey = make_survey(researcher)
    client = Client()
    url = start_task(client, survey, "w1")
    page = client.get(url).content.decode()
    data = _fill(page)
    item_ids = re.findall(r'data-number="\d+" data-item="(\d+)"', page)
    left_out = [item_ids[2], item_ids[6]]
    for item in left_out:
        data = {k: v for k, v in data.items() if not k.startswith(f"score-{item}-")}
    response = client.post(url, data)
    html = response.content.decode()
    assert response.status_code == 400 and "replies 3 and 7 are still unanswered" in html
    summary = re.search(r'<div id="error-summary"[^>]*>', html).group(0)
    assert "hidden" not in summary and 'role="alert"' in summary
    for item in left_out:
        assert f'<p class="item-error" id="error-{item}">' in html, "the message sits next to the item"
        assert re.search(rf'name="score-{item}-overall" value="1" required aria-invalid="true"', html)
        assert f'aria-describedby="candidate-{item} error-{item}"' in html
    assert html.count('aria-invalid="true"') == 2 * 5 and not Rating.objects.exists()


def test_blocks_and_replies_are_numbered_without_gaps_and_checks_look_alike(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=2)
    client = Client()
    html = client.get(start_task(client, survey, "w1")).content.decode()
    titles = re.findall(r'class="block-title">([^<]+)</h2>', html)
    assert titles == [f"Conversation {n}" for n in range(1, len(titles) + 1)]
    replies = [int(n) for n in re.findall(r'<span class="candidate-label">Reply (\d+):</span>', html)]
    assert replies == list(range(1, len(replies) + 1)) and len(replies) == 20  # five blocks of four
    legends = re.findall(r'<legend><span class="visually-hidden">Reply (\d+): </span>', html)
    assert [int(n) for n in legends] == replies, "each rating group has its own accessible name"
    assert "Check " not in html


def test_annotator_pages_say_task_never_hit(researcher):
    survey = make_survey(researcher)
    client = Client()
    start = client.get(f"/s/{survey.token}/").content.decode()
    url = start_task(client, survey)
    page = client.get(url).content.decode()
    client.post(url, _fill(page))
    done = client.get(f"{url}done/").content.decode()
    for html in (start, page, done):
        visible = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)[^>]*>.*?</\1>", "", html, flags=re.S))
        assert not re.search(r"\bHITs?\b", visible), visible
    assert "Task 1 of at most 4" in page and "Do another task" in done  # 4 HITs, under the cap of 10


def test_a_csrf_failure_on_the_task_page_keeps_the_answers(researcher):
    survey = make_survey(researcher)
    client = Client(enforce_csrf_checks=True)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(f"/s/{survey.token}/").content.decode())
    started = client.post(f"/s/{survey.token}/", {"action": "start", "csrfmiddlewaretoken": csrf.group(1)})
    page = client.get(started_task(started)).content.decode()
    answers = _fill(page, score=4)
    stale = {**answers, "csrfmiddlewaretoken": "x" * 64}  # the token of a tab whose cookie was replaced
    refused = client.post(started_task(started), stale)
    html = refused.content.decode()
    assert refused.status_code == 403 and "open in another tab" in html and "Your answers are kept" in html
    assert html.count('value="4" required checked') == len([k for k in answers if k.startswith("score-")])
    fresh = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    submitted = client.post(started_task(started), {**answers, "csrfmiddlewaretoken": fresh})
    assert submitted.status_code == 302 and Rating.objects.count() == 12


def test_a_csrf_failure_on_the_start_page_asks_to_press_again_and_elsewhere_is_djangos(researcher):
    survey = make_survey(researcher)
    client = Client(enforce_csrf_checks=True)
    client.get(f"/s/{survey.token}/")
    response = client.post(f"/s/{survey.token}/", {"action": "start", "csrfmiddlewaretoken": "y" * 64})
    assert response.status_code == 403 and "press the button again" in response.content.decode()
    assert not Annotator.objects.exists()
    login = client.post("/accounts/login/", {"username": "x", "password": "y"})
    assert login.status_code == 403 and "open in another tab" not in login.content.decode()


def test_the_cap_is_a_field_of_the_survey_form(researcher_client, researcher):
    make_survey(researcher)  # the form is shown to a researcher who has a dataset
    page = researcher_client.get("/surveys/new/").content.decode()
    assert 'name="new_annotators_per_address_hour"' in page and "per network address per hour" in page


def test_personal_invitation_links_carry_a_secret_and_start_as_their_annotator(researcher):
    survey = make_survey(researcher)
    out = io.StringIO()
    call_command("survey_invites", survey=survey.name, labels="ana,ben", base_url="https://lab.example", stdout=out)
    links = dict(line.split("\t") for line in out.getvalue().splitlines())
    assert set(links) == {"ana", "ben"} and all(f"/s/{survey.token}/?invite=" in link for link in links.values())
    path = links["ana"].removeprefix("https://lab.example")

    client = Client()
    start = client.get(path)
    assert "you take part as <strong>ana</strong>" in start.content.decode()
    assert "ratelab_worker" not in start.cookies and not Assignment.objects.exclude(status="open").exists()
    invite = path.split("invite=")[1]
    started = client.post(f"/s/{survey.token}/", {"action": "start", "invite": invite})
    assert started.status_code == 200 and Assignment.objects.get(status="active").annotator.worker_id == "ana"
    assert invite in client.get(started_task(started)).content.decode(), "the invitation's code is the resume code"

    forged = Client().post(f"/s/{survey.token}/", {"action": "start", "invite": "aaaaa-bbbbb-ccccc-ddddd"})
    assert forged.status_code == 400 and "not valid" in forged.content.decode()
    assert "ratelab_worker" not in forged.cookies
    with pytest.raises(CommandError, match="Already in use: ana"):
        call_command("survey_invites", survey=survey.name, labels="ana", stdout=io.StringIO())
