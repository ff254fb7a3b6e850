"""Every researcher URL, enumerated from the resolver, so a new view cannot forget its guard.

Each pattern is filled with real objects of alice's (a dataset, surveys on every provider, an
annotator, a written reply, a metric run, a judge, an ADEM model and its training run, an API token,
a report). Then:

- an anonymous visitor is sent to the login page (GET and POST alike), and nothing is written;
- bob, another researcher, gets 404 (405 where the method is wrong) on each of alice's objects,
  never a page, and his pages without an object id never name anything of alice's; naming
  alice's annotator or written reply inside a survey of his own is a 404 too;
- alice's own GET writes nothing (a state change needs a POST), and her POST without a CSRF token
  is refused with 403 and writes nothing;
- a staff user without permissions writes nothing through any of them.

A pattern that is not a researcher page goes into PUBLIC_PATTERNS below, with the reason, or the
test fails naming it.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from analysis.tasks.scheduling import report_current
from annotation import services
from annotation.crowd.link_platform import platform_settings
from annotation.models import Annotator, ChatSystem, Conversation, ConversationTurn, Survey, WrittenResponse
from annotation.services import mturk as mturk_services
from scoring.models import AdemModel, ApiToken, Judge, TrainingRun
from scoring.services.metrics.compute import metrics_compute
from scoring.services.tokens import api_token_create
from tests.access.db_fingerprint import fingerprint
from tests.annotation import mturk_helpers
from tests.annotation.prolific_helpers import make_prolific_survey
from tests.annotation.studies_helpers import dataset_records, good_answers, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

# Every name of alice's objects carries this word: bob's pages must never show it.
MARK = "alicesecret"

# Patterns that are not researcher pages, by name (or by route for unnamed ones), and why.
PUBLIC_PATTERNS = {
    # The site's front door and its icon: redirects, no data.
    "<root>": "redirects to the datasets list, which needs login",
    "favicon.ico": "a redirect to a static file",
    # Django's own account pages: anyone may log in or ask for a reset mail.
    "login": "the login page",
    "logout": "logging out",
    "password_reset": "asks for an e-mail address",
    "password_reset_done": "says a mail was sent",
    "password_reset_confirm": "the mailed link is the credential",
    "password_reset_complete": "says the password was changed",
    # Annotator pages: the survey's or assignment's unguessable token in the URL is the credential
    # (tests/annotation cover each one: other annotators get 403/404, no system names shown).
    "annotation:task_entry": "annotator: survey link",
    "annotation:task_assignment": "annotator: assignment link",
    "annotation:task_done": "annotator: assignment link",
    "annotation:task_chat": "annotator: a live chat's messages (assignment link; tests/annotation/test_live_chat.py)",
    "annotation:mturk_task": "annotator: MTurk's ExternalQuestion page",
    "annotation:mturk_draft": "annotator: MTurk page's draft saving",
    "annotation:mturk_chat": "annotator: a live chat inside MTurk's frame (assignment token; "
    "tests/annotation/test_live_chat_crowds.py)",
    "annotation:prolific_entry": "annotator: Prolific study link",
    "annotation:prolific_finish": "annotator: Prolific completion",
    "annotation:link_entry": "annotator: link-platform study link",
    "annotation:link_finish": "annotator: link-platform completion",
    "annotation:consent_page": "annotator: consent page (survey link and identity cookie)",
    "annotation:questionnaire_page": "annotator: questionnaire (survey link and identity cookie)",
    # Prolific's signed webhook deliveries: no session; 403 without a valid signature.
    "annotation:prolific_webhook": "Prolific's signed deliveries",
}
# The scoring API authenticates by Bearer token or session: anonymous callers get a JSON 401, not
# a login page (a script cannot follow one). Everything else about it is checked like a page.
API_PATTERNS = {"scoring:adem_score", "scoring:adem_model_score"}

# Django's admin has its own login and permission checks (staff only), tested by Django.
SKIPPED_NAMESPACES = {"admin"}


def all_patterns(resolver=None, namespace=None, prefix=""):
    """(name, pattern, route) of every URL pattern outside the admin; name is `namespace:name`, or
    the route for unnamed ones."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if entry.namespace not in SKIPPED_NAMESPACES:
                yield from all_patterns(entry, entry.namespace or namespace, route)
        elif isinstance(entry, URLPattern):
            if entry.name:
                yield (f"{namespace}:{entry.name}" if namespace else entry.name), entry, route
            else:
                yield (route or "<root>"), entry, route


def written_survey(owner, mark):
    dataset = load_dataset_records(records=dataset_records(2), name=f"{mark}-written", owner=owner)
    survey = services.survey_create(
        dataset=dataset, name=f"{mark}-write", owner=owner, task_type="write", write_system_name="people"
    )
    survey = services.survey_launch(survey=survey)
    assignment = services.assignment_claim(survey=survey, worker_id=f"{mark}-writer")
    answers = {
        item.pk: {"scores": {}, "seconds": 4.0, "text": "a reply of mine"}
        for item in services.assignment_items(assignment=assignment)
    }
    services.assignment_submit(assignment=assignment, answers=answers)
    return survey


def conversation_of(dataset, mark):
    """A conversation in the dataset (issue 37: its pages name it under the dataset)."""
    conversation = Conversation.objects.create(
        dataset=dataset, external_id=f"{mark}-conversation", position=0, system=dataset.systems.first()
    )
    ConversationTurn.objects.create(conversation=conversation, index=0, speaker="system", text="Hello.")
    return conversation


def study_objects(owner, mark, capture_on_commit):
    """One of each object a researcher may own, named with `mark`, with the rows their pages make on
    first sight already made. Their annotators are the owner's own (worker ids carry the mark)."""
    survey = make_survey(owner, name=f"{mark}-study")
    for n in (1, 2):  # two raters: the report has its split-half plot
        assignment = services.assignment_claim(survey=survey, worker_id=f"{mark}-worker-{n}")
        services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    turk = mturk_helpers.make_survey(owner, n_hits=1, name=f"{mark}-turk")
    mturk_services.mturk_settings_ensure(survey=turk)
    prolific = make_prolific_survey(owner, name=f"{mark}-prolific")
    link = make_survey(owner, name=f"{mark}-link")
    Survey.objects.filter(pk=link.pk).update(provider=Survey.Provider.LINK)
    link.refresh_from_db()
    platform_settings(link)
    written = written_survey(owner, mark)
    conversation_of(survey.dataset, mark)
    api_token_create(user=owner, name=f"{mark}-token")
    with capture_on_commit(execute=True):  # computed, as the embedded worker would
        report = report_current(dataset=survey.dataset)
    report.refresh_from_db()
    return {
        "dataset": survey.dataset,
        "survey": survey,
        "turk": turk,
        "prolific": prolific,
        "link": link,
        "written_survey": written,
        "written": WrittenResponse.objects.filter(assignment__hit__survey=written).first(),
        "annotator": Annotator.objects.get(worker_id=f"{mark}-worker-1"),
        "metric_run": metrics_compute(dataset=survey.dataset, metrics=["bleu1"], user=owner, dispatch=False),
        "judge": Judge.objects.create(owner=owner, name=f"{mark}-judge", base_url="http://127.0.0.1:9/v1", model="m"),
        "chat_system": ChatSystem.objects.create(
            owner=owner, name=f"{mark}-chat", base_url="http://127.0.0.1:9/v1", model="m"
        ),
        "training_run": TrainingRun.objects.create(
            kind=TrainingRun.Kind.EXPERIMENT, owner=owner, dataset=survey.dataset
        ),
        "adem": AdemModel.objects.create(
            owner=owner, dataset=survey.dataset, name=f"{mark}-adem", status=AdemModel.Status.READY
        ),
        "token": ApiToken.objects.get(user=owner),
        "report": report,
    }


@pytest.fixture
def alices(researcher, monkeypatch, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    mturk_helpers.install_stub(monkeypatch, settings)
    return study_objects(researcher, MARK, django_capture_on_commit_callbacks)


SURVEY_ACTIONS = ("launch", "pause", "close", "reopen")


def survey_for(name, objects):
    for word in ("mturk", "prolific", "link", "written"):
        if word in name:
            return objects["turk" if word == "mturk" else "written_survey" if word == "written" else word]
    return objects["survey"]


# Arguments naming an object inside the one the URL's first id names (a survey's annotator or reply).
CHILD_KEYS = ("annotator_pk", "annotator_id", "written_pk")


def sample_urls(name, pattern, route, objects, children=None):
    """The pattern filled with alice's objects (each id argument names a real object of hers), once
    per action where the URL names one. `children`: whose objects fill CHILD_KEYS instead."""
    keys = list(pattern.pattern.regex.groupindex)
    children = children or objects
    values = {
        "what": "ratings",
        "survey_id": survey_for(name, objects).pk,
        "dataset_id": objects["dataset"].pk,
        "annotator_pk": children["annotator"].pk,
        "annotator_id": children["annotator"].pk,
        "written_pk": children["written"].pk,
        "judge_id": objects["judge"].pk,
        "model_id": objects["adem"].pk,
        "token_id": objects["token"].pk,
        "run_id": objects["training_run" if name.startswith("scoring:adem") else "metric_run"].pk,
        # a context of the dataset the URL names (its scores page)
        "context_pk": objects["dataset"].contexts.order_by("pk").first().pk,
        "conversation_pk": objects["dataset"].conversations.order_by("pk").first().pk,
    }
    if route.lstrip("^").startswith("datasets"):
        values["pk"] = objects["dataset"].pk
    elif name.startswith("analysis:"):
        values["pk"] = objects["report"].pk
    elif name.startswith("annotation:chat_system"):
        values["pk"] = objects["chat_system"].pk
    else:
        values["pk"] = survey_for(name, objects).pk
    if name in ("annotation:dataset_download", "annotation:conversations_download"):
        values["fmt"] = "csv"
    elif name == "analysis:report_export":
        values["fmt"] = "json"
    elif name == "annotation:questionnaire_export":
        values["fmt"] = "csv"
    elif name == "annotation:survey_datasheet":
        values["fmt"] = "md"
    elif name == "analysis:report_plot":
        values.update(kind="human", fmt="svg")
    elif name == "analysis:report_table":
        values["name"] = "systems"
    else:
        values["name"] = objects["adem"].name  # by-name ADEM URLs: always the caller's own model
    missing = [key for key in keys if key not in values and key != "action"]
    assert not missing, f"{name}: say which of alice's objects fills {missing} in sample_urls"
    actions = SURVEY_ACTIONS if "action" in keys else [None]
    return [
        reverse(name, kwargs={key: action if key == "action" else values[key] for key in keys}) for action in actions
    ]


def researcher_urls(objects, children=None, *, only_with_children=False):
    """(name, url, takes an object id) of every researcher pattern, alice's objects filled in."""
    urls = []
    for name, pattern, route in all_patterns():
        keys = set(pattern.pattern.regex.groupindex)
        if name in PUBLIC_PATTERNS or (only_with_children and not keys & set(CHILD_KEYS)):
            continue
        takes_id = bool(keys - {"action", "what", "fmt", "kind"})
        urls.extend((name, url, takes_id) for url in sample_urls(name, pattern, route, objects, children))
    return urls


def test_every_pattern_is_a_researcher_page_or_named_public_with_a_reason(alices):
    names = {name for name, _pattern, _route in all_patterns()}
    assert set(PUBLIC_PATTERNS) <= names, f"stale entries: {set(PUBLIC_PATTERNS) - names}"
    researcher_names = {name for name, _url, _takes_id in researcher_urls(alices)}
    assert len(researcher_names) > 40, "the resolver walk found the apps' patterns"
    assert {"annotation:survey_action", "scoring:judge_remove", "analysis:report_refresh"} <= researcher_names


def test_alice_reaches_every_url_naming_her_objects(client, researcher, alices):
    """The sample objects are real: bob's 404s below are refusals, not missing objects."""
    assert alices["report"].data is not None, "the report was computed"
    client.force_login(researcher)
    missing = []
    for name, url, takes_id in researcher_urls(alices):
        status = client.get(url).status_code
        if takes_id and status not in (200, 302, 405):
            missing.append(f"{name} {url} -> {status}")
    assert not missing, "alice's own objects were not found: " + "; ".join(missing)


def test_an_anonymous_visitor_is_sent_to_log_in_by_every_researcher_url_and_writes_nothing(client, alices):
    before = fingerprint()
    wrong = []
    for name, url, _takes_id in researcher_urls(alices):
        for method in (client.get, client.post):
            response = method(url)
            if name in API_PATTERNS:
                ok = response.status_code == (401 if method == client.post else 405)  # POST only
            else:
                ok = response.status_code == 302 and response["Location"].startswith(f"{reverse('login')}?next=")
            if not ok:
                wrong.append(f"{method.__name__.upper()} {name} {url} -> {response.status_code}")
    assert not wrong, "anonymous visitors reached researcher URLs: " + "; ".join(wrong)
    assert fingerprint() == before


def test_another_researcher_gets_404_on_every_url_naming_alices_objects_and_writes_nothing(
    client, other_researcher, alices
):
    client.force_login(other_researcher)
    before = fingerprint()
    wrong = []
    for name, url, takes_id in researcher_urls(alices):
        for method in (client.get, client.post):
            data = {"action": "close", "confirm": "yes", "note": "x", "reason": "x"} if method == client.post else {}
            response = method(url, data)
            if takes_id:
                ok = response.status_code in (404, 405)  # 405: the method is wrong before any lookup
            else:
                ok = MARK not in response.content.decode(errors="replace")
            if not ok:
                wrong.append(f"{method.__name__.upper()} {name} {url} -> {response.status_code}")
    assert not wrong, "bob reached alice's objects: " + "; ".join(wrong)
    assert fingerprint() == before, "bob's requests wrote to the database"


def test_another_researcher_naming_alices_annotator_or_reply_inside_his_own_survey_gets_404(
    client, other_researcher, alices, django_capture_on_commit_callbacks
):
    bobs = study_objects(other_researcher, "bobown", django_capture_on_commit_callbacks)
    client.force_login(other_researcher)
    urls = researcher_urls(bobs, alices, only_with_children=True)
    assert len(urls) >= 5, "survey_annotator, survey_review, survey_written_reply, quality_annotator, quality_override"
    before = fingerprint()
    wrong = []
    for name, url, _takes_id in urls:
        for method in (client.get, client.post):
            data = {"action": "exclude", "note": "x", "reason": "x"} if method == client.post else {}
            response = method(url, data)
            if response.status_code not in (404, 405):
                wrong.append(f"{method.__name__.upper()} {name} {url} -> {response.status_code}")
    assert not wrong, "bob reached alice's annotator or reply through his own survey: " + "; ".join(wrong)
    assert fingerprint() == before


# GETs that may write, and why that is no state change a visitor could force on a researcher.
GETS_THAT_WRITE = {
    # The report pages compute the report (a cache of figures derived from the researcher's own data,
    # one row per dataset, survey and filter; filters naming no aspect or system are refused first).
    "analysis:dataset_report": "stores the computed report of the owner's own data",
    "analysis:survey_report": "stores the computed report of the owner's own data",
}


def test_the_owners_get_of_every_researcher_url_changes_nothing(client, researcher, alices):
    client.force_login(researcher)
    wrote = []
    for name, url, _takes_id in researcher_urls(alices):
        if name in GETS_THAT_WRITE:
            continue
        before = fingerprint()
        client.get(url)
        if fingerprint() != before:
            wrote.append(f"{name} {url}")
    assert not wrote, "a GET changed the database (a state change needs a POST): " + "; ".join(wrote)


def test_the_owners_post_without_a_csrf_token_is_refused_everywhere_and_writes_nothing(researcher, alices):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    before = fingerprint()
    wrong = []
    for name, url, _takes_id in researcher_urls(alices):
        response = client.post(url, {"action": "close", "confirm": "yes", "note": "x", "reason": "x"})
        if response.status_code not in (403, 405):  # 405: a GET-only view refuses the method first
            wrong.append(f"{name} {url} -> {response.status_code}")
    assert not wrong, "POSTs without a CSRF token were not refused: " + "; ".join(wrong)
    assert fingerprint() == before


def test_a_staff_user_without_permissions_writes_nothing_through_any_url_naming_alices_objects(client, alices):
    """Staff may read every study (tests/access/test_staff_writes.py); here every id names a real
    object of alice's, so a write guarded by a lookup of the wrong kind would show."""
    staff = get_user_model().objects.create_user("staffer", password="x", is_staff=True)
    client.force_login(staff)
    before = fingerprint()
    wrote = []
    for name, url, takes_id in researcher_urls(alices):
        if not takes_id:
            continue
        client.post(url, {"action": "close", "confirm": "yes", "note": "x", "reason": "x"})
        if fingerprint() != before:
            wrote.append(f"{name} {url}")
            before = fingerprint()
    assert not wrote, "a staff POST wrote to alice's study: " + "; ".join(wrote)


# What alice's workers are called in the sample study (study_objects): their real ids.
ALICES_WORKER_IDS = (f"{MARK}-worker-1", f"{MARK}-worker-2", f"{MARK}-writer")


def test_a_staff_user_reads_alices_pages_with_her_workers_as_pseudonyms_never_their_real_ids(client, alices):
    """Real worker ids are personal data collected for alice's study: staff, who may read it, see
    the dataset's pseudonyms (A1, A2, ...) on every page and download of it, as another researcher
    would in a shared export (docs/prolific.md, "Pseudonymised exports")."""
    staff = get_user_model().objects.create_user("staffer", password="x", is_staff=True)
    client.force_login(staff)
    leaks = []
    for name, url, takes_id in researcher_urls(alices):
        if not takes_id:
            continue
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode(errors="replace")
        leaks.extend(f"{name} {url} names {worker}" for worker in ALICES_WORKER_IDS if worker in text)
    assert not leaks, "staff saw alice's real worker ids: " + "; ".join(leaks)
    client.force_login(alices["survey"].owner)
    assert (
        f"{MARK}-worker-1"
        in client.get(reverse("annotation:survey_detail", args=[alices["survey"].pk])).content.decode()
    )
