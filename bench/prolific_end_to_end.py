"""The demo's survey run on Prolific end to end, against a Prolific-compatible server.

    .venv/bin/python bench/prolific_end_to_end.py [--participants 12]

Starts bench/prolific_server.py on a free local port and points RateLab at it with PROLIFIC_API_URL,
on a throw-away SQLite database under bench/out/. Then, through RateLab's real commands, pages and
provider: `create_survey --provider prolific` publishes the demo dataset's survey; participants
start it on "Prolific" (which sends them to the study URL), rate on RateLab's pages and go back with
their completion code; one more person types a made-up PROLIFIC_PID/SESSION_ID into the study URL;
`prolific_sync` reconciles; the researcher approves, rejects one participant (whose place Prolific
re-offers: a newcomer takes it and finds tasks), pays one bonus (its form sent twice), blocks
one participant (a participant group that the next study excludes) and downloads the report
pseudonymised. Prints what each step saw.
"""

import argparse
import io
import json
import os
import random
import re
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import parse_qsl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TOKEN = "staging-token-not-a-secret"
COMPLETE_RE = re.compile(r"^https://app\.prolific\.com/submissions/complete\?cc=(\w+)$")


def setup(out):
    from bench.prolific_server import serve

    server, state = serve(TOKEN)
    db_file = out / "prolific_end_to_end.sqlite3"
    db_file.unlink(missing_ok=True)
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{db_file}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PROLIFIC_API_TOKEN": TOKEN,
            "PROLIFIC_API_URL": f"http://127.0.0.1:{server.server_address[1]}/api/v1/",
            "PUBLIC_BASE_URL": "https://ratelab.example.org",
            "PROLIFIC_WORKSPACE_ID": "workspace-of-the-lab",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    return server, state


def run(*args, **options):
    from django.core.management import call_command

    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err, **options)
    return out.getvalue().strip(), err.getvalue().strip()


def participate(state, study_id, participant, rng, address):
    """One participant: Start on Prolific, RateLab's pages until no work is left, back to Prolific.

    Each from an address of their own, as participants at home are (new sessions are capped per
    address and hour)."""
    from django.test import Client

    from annotation.kinds.simulated import SimulatedAnnotator
    from annotation.models import Aspect, Assignment
    from annotation.services import assignment_items

    session_id, study_url = state.participant_start(study_id, participant)
    browser = Client(REMOTE_ADDR=address)
    local = study_url.replace("https://ratelab.example.org", "")
    assert browser.get(local).status_code == 200  # the entry page: claims nothing
    path, query = local.split("?")
    response = browser.post(path, dict(parse_qsl(query)))  # its Start button posts the three ids
    rater = SimulatedAnnotator(participant, careless=False, rng=rng)
    tasks = 0
    while response.status_code == 302 and "/a/" in response["Location"]:
        token = response["Location"].rstrip("/").split("/")[-1]
        assignment = Assignment.objects.get(token=token)
        aspects = sorted(assignment.hit.survey.aspects.all(), key=lambda a: a.key != Aspect.OVERALL)
        form = {}
        for item in assignment_items(assignment=assignment):
            for aspect in aspects[:1]:
                form[f"score-{item.pk}-{aspect.key}"] = str(rater.score(item, aspect))
        done = browser.post(response["Location"], form)
        assert done.status_code == 302, done.content[:300]
        tasks += 1
        if tasks >= 2:
            break
        response = browser.post(path, {"action": "start"})  # "Do another task"
    finish = browser.get(path + "finish/")
    code = COMPLETE_RE.match(finish["Location"]).group(1)
    state.participant_complete(session_id, code, seconds=rng.randint(420, 900))
    return session_id, tasks, code


def reject_and_replace(state, provider, row, rng):
    """Reject one participant; Prolific re-offers the place, and a newcomer finds their tasks open."""
    from annotation.models import Assignment

    survey = row.study.survey
    theirs = Assignment.objects.filter(hit__survey=survey, annotator=row.annotator, status__in=Assignment.FINISHED)
    hits = set(theirs.values_list("hit__position", flat=True))
    message = "You gave every reply the same score and missed the check that asked for a particular answer. " * 2
    provider.reject(assignment=theirs.first(), reason=message, category="LOW_EFFORT")
    reopened = Assignment.objects.filter(hit__survey=survey, hit__position__in=hits, status="open").count()
    print(
        f"rejected {row.participant_id} ({len(hits)} task(s)); Prolific lists them "
        f"{state.submissions[row.session_id]['status']}; open slots on their HITs now {reopened}"
    )
    newcomer = "5f" + "e" * 22
    participate(state, row.study.study_id, newcomer, rng, "198.51.100.250")
    took = sorted(
        Assignment.objects.filter(hit__survey=survey, annotator__worker_id=newcomer).values_list(
            "hit__position", flat=True
        )
    )
    print(f"  a newcomer on the re-offered place did HITs {took} (the rejected participant's: {sorted(hits)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    server, state = setup(out)
    started = time.monotonic()
    print(f"Prolific-compatible server: {os.environ['PROLIFIC_API_URL']}")

    run("migrate", verbosity=0)
    run("load_demo")
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from analysis.tasks.scheduling import report_current
    from annotation.crowd.prolific.blocklist import participant_block
    from annotation.crowd.prolific.provider import ProlificProvider
    from annotation.models import Assignment, ProlificStudy, Survey

    study_url, err = run(
        "create_survey", dataset="demo", owner="demo", name="demo-on-prolific", provider="prolific",
        reward_cents=150, minutes=10, contexts_per_hit=5, assignments=3, attention_checks=1, overlap=5,
    )  # fmt: skip
    survey = Survey.objects.get(name="demo-on-prolific")
    study = ProlificStudy.objects.get(survey=survey)
    remote = state.studies[study.study_id]
    print(f"create_survey: {err.splitlines()[0]}")
    print(f"  study URL printed: {study_url}")
    print(f"  on the server: study {study.study_id} {remote['status']}, {remote['total_available_places']} places, "
          f"reward {remote['reward']}, codes {[c['code_type'] for c in remote['completion_codes']]}")  # fmt: skip

    rng = random.Random(args.seed)
    participants = [f"5f{n:022x}" for n in range(1, args.participants + 1)]
    done = [participate(state, study.study_id, pid, rng, f"198.51.100.{n}") for n, pid in enumerate(participants, 1)]
    tasks = sum(t for _, t, _ in done)
    codes = sorted({c for _, _, c in done})
    print(f"participants: {len(done)} started on Prolific, {tasks} tasks done on RateLab's pages, "
          f"codes back to Prolific: {codes} (COMPLETED is {study.completed_code})")  # fmt: skip

    forger = Client()
    made_up = {"PROLIFIC_PID": "5f" + "f" * 22, "STUDY_ID": study.study_id, "SESSION_ID": "e" * 24}
    forged = forger.post(f"/p/{survey.token}/", made_up)
    forged_work = Assignment.objects.filter(hit__survey=survey, annotator__worker_id=made_up["PROLIFIC_PID"]).count()
    print(f"made-up PROLIFIC_PID/SESSION_ID typed into the study URL: HTTP {forged.status_code}, "
          f"{forged_work} task(s) handed out, to count only if Prolific lists that session")  # fmt: skip

    summary, _ = run("prolific_sync", survey="demo-on-prolific")
    print(f"prolific_sync: {summary}")
    rows = list(study.submissions.select_related("annotator"))
    print(f"  confirmed {sum(r.confirmed for r in rows)} of {len(rows)} sessions seen by the entry page")

    provider = ProlificProvider()
    cost = provider.cost_preview(survey=survey)
    print(f"cost preview (study-cost-calculator/): {cost['total_cost_cents'] / 100:.2f} GBP with fees")
    confirmed = [r for r in rows if r.confirmed]
    for row in confirmed[:-2]:
        slot = Assignment.objects.filter(
            hit__survey=survey, annotator=row.annotator, status__in=Assignment.FINISHED
        ).first()
        provider.approve(assignment=slot)
    reject_and_replace(state, provider, confirmed[-2], rng)
    first = confirmed[0]
    slot = Assignment.objects.filter(hit__survey=survey, annotator=first.annotator).first()
    for _ in range(2):  # the same bonus form sent twice
        provider.bonus(assignment=slot, amount_cents=50, reason="", key="e2e-bonus-1")
    paid = state.submissions[first.session_id]["bonus_payments"]
    print(
        f"approved {len(confirmed) - 2}; bonus form sent twice -> Prolific lists bonus payments {paid} "
        f"for {first.participant_id}"
    )

    owner = get_user_model().objects.get(username="demo")
    group = participant_block(
        client=provider.client, submission=confirmed[-1], reason="Straight-lined every item.", user=owner
    )
    print(
        f"blocked {confirmed[-1].participant_id}: participant group {group} holds {state.groups[group]['participants']}"
    )
    run("create_survey", dataset="demo", owner="demo", name="demo-on-prolific-2", provider="prolific",
        reward_cents=150, minutes=10, contexts_per_hit=5, assignments=1)  # fmt: skip
    second = ProlificStudy.objects.get(survey__name="demo-on-prolific-2")
    print(f"next study's filters: {state.studies[second.study_id].get('filters')}")
    try:
        state.participant_start(second.study_id, confirmed[-1].participant_id)
        print("  the blocked participant could start the next study (unexpected)")
    except PermissionError as refusal:
        print(f"  Prolific keeps them out: {refusal}")

    report = report_current(
        dataset=survey.dataset, survey=survey, aspect="overall", systems=None, apply_exclusions=True
    )
    report.refresh_from_db()  # computed at once: Celery runs eagerly in this embedded set-up
    data = report.data
    client = Client()
    client.force_login(owner)
    archive = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("analysis:report_export", args=[report.pk, "zip"])).content)
    )
    blob = b"".join(archive.read(name) for name in archive.namelist())
    leaked = [pid for pid in participants if pid.encode() in blob]
    workers = sorted({row["worker"] for row in json.loads(archive.read("report.json"))["agreement"]["annotators"]})
    print(
        f"report zip ({len(archive.namelist())} files): workers {workers}; "
        f"real PROLIFIC_PIDs in its bytes: {len(leaked)}"
    )
    utterance = {row["metric"]: row["pearson"] for row in data["utterance_level"]}
    excluded = data["filters"]["excluded_annotators"]
    print(
        f"report: {data['n_ratings']} accepted ratings of {data['filters']['n_ratings_before_exclusions']}; "
        f"excluded annotators (pseudonyms on the page) {len(excluded)}; metrics computed {len(utterance)}"
    )

    calls = {}
    for method, path in state.requests:
        key = f"{method} {re.sub(r'[0-9a-f]{24}', '{id}', path)}/"
        calls[key] = calls.get(key, 0) + 1
    print("requests the server answered:")
    for key, count in sorted(calls.items()):
        print(f"  {count:3d}  {key}")
    print(f"done in {time.monotonic() - started:.1f} s")
    server.shutdown()


if __name__ == "__main__":
    main()
