"""`manage.py demo`, the README's main job, runs the whole pipeline on the generated study."""

import io
import logging
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from analysis.models import Report
from analysis.report.report_keys import params_hash, report_params
from annotation.models import Rating, Survey
from scoring.models import AdemModel, MetricScore

pytestmark = pytest.mark.django_db


def test_demo_runs_the_whole_pipeline_and_prints_links_on_the_given_address(caplog, client):
    out = io.StringIO()
    with caplog.at_level(logging.INFO):
        call_command("demo", "--base-url", "http://demo.example:8765", stdout=out, stderr=io.StringIO())
    text = out.getvalue()

    simulated = Survey.objects.get(name="demo-simulated")
    live = Survey.objects.get(name="demo-live")
    assert Rating.objects.filter(survey=simulated).count() > 1000
    assert live.status == Survey.Status.LIVE
    assert not Rating.objects.filter(survey=live).exists()  # left for the user to rate
    assert AdemModel.objects.get(name="demo-adem").owner.username == "demo"  # listed on the demo's ADEM page
    assert MetricScore.objects.filter(metric="adem:demo-adem").count() == 300
    assert MetricScore.objects.filter(metric="bleu4").count() == 300

    # One annotator link, the live survey's, on the address given: not those of the surveys the
    # simulated annotators finished (browser walk F31).
    links = re.findall(r"https?://[^\s/]+/[a-z]/[\w-]+/", text)
    # ... and the conversation study's two live surveys: a per-turn task and an ACUTE task to try.
    live_turns = Survey.objects.get(name="demo-conversations-live")
    live_acute = Survey.objects.get(name="demo-acute-live")
    # ... and the live chat survey with the demo bot (issue 38).
    live_chat = Survey.objects.get(name="demo-live-chat")
    assert links == [f"http://demo.example:8765/s/{s.token}/" for s in (live, live_chat, live_turns, live_acute)]
    assert live_chat.task_type == "chat"
    assert (live_turns.task_type, live_acute.task_type) == ("conversation", "acute")
    # No internal log lines between the steps: eager tasks' "succeeded in", kombu's "No hostname".
    logged = [record.getMessage() for record in caplog.records]
    assert not [m for m in logged if "succeeded in" in m or "No hostname was supplied" in m]
    assert "Demo ready in" in text
    assert "(login: demo / demo-password)" in text
    # The simulated surveys are laid out from the demo's seed, so each build simulates the same ratings
    # and prints the same figures; the surveys left for the user to try keep a random layout.
    simulated_names = ("demo-simulated", "demo-pairwise", "demo-writing", "demo-conversations-rated", "demo-acute")
    assert dict(Survey.objects.filter(name__in=simulated_names).values_list("name", "layout_seed")) == {
        name: f"demo:7:{name}" for name in simulated_names
    }
    assert {s.layout_seed for s in (live, live_turns, live_acute, live_chat)} == {""}
    # Excluded: the two careless raters and the straight-liner, in every layout tried, not only the
    # seeded one. The demo's kappa is linear-weighted: unweighted, careful raters sat near 0.2 and one
    # CI run excluded 7 of 12; weighted, 40 layouts kept every careful rater at 0.378 or more.
    annotators, excluded = map(int, re.search(r"(\d+) annotators, (\d+) excluded", text).groups())
    assert (annotators, excluded) == (12, 3)
    careless = {line.split(":")[0].strip() for line in text.splitlines() if "median" in line and "EXCLUDED" in line}
    assert len(careless) == 2  # excluded by the speed rule too, which only the careless break
    # One kappa per annotator line, the one the rule compares, and the line above says what it is.
    assert "kappa = their mean linear-weighted Cohen's kappa with the annotators who agree" in text
    assert "the exclusion rule needs at least 0.2" in text
    lines = [line for line in text.splitlines() if re.match(r"  \S+: kappa ", line)]
    assert len(lines) == 12
    for line in lines:
        assert len(re.findall(r"-?\d+\.\d{3}", line.split(" ratings,")[0])) == 1, line
        assert "kappa 0." not in line.split(" ratings,")[1] and "kappa -0." not in line.split(" ratings,")[1], line

    # The Bradley-Terry ranking printed is the Report page's own (one computation: browser walk F19).
    report = Report.objects.get(dataset__name="demo", survey=None, params_hash=params_hash(report_params()))
    computed_at = report.computed_at
    printed = {
        m.group(1): (float(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in re.finditer(r"^(\S+)\s+(-?\d+\.\d\d)\s+\[(-?\d+\.\d\d), (-?\d+\.\d\d)\]", text, re.M)
    }
    systems = report.data["pairwise"]["systems"]
    assert len(systems) == 6 and {row["system"] for row in systems} <= set(printed)
    for row in systems:
        assert printed[row["system"]] == (
            round(row["strength"], 2),
            round(row["ci_low"], 2),
            round(row["ci_high"], 2),
        ), row["system"]
    client.force_login(User.objects.get(username="demo"))
    page = client.get(reverse("analysis:dataset_report", args=[report.dataset_id])).content.decode()
    # the page shows that stored report, not a recomputation of its own
    assert Report.objects.get(pk=report.pk).computed_at == computed_at
    ranking = page.split('id="t-pairwise"', 1)[1].split("</table>", 1)[0]
    for row in systems:
        assert f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]" in ranking

    # The conversation study's report shows the Conversations section: means, flags, ACUTE, metrics.
    conversations = Report.objects.get(dataset__name="demo-conversations", params_hash=params_hash(report_params()))
    part = conversations.data["conversations"]
    assert {row["system"] for row in part["systems"]} == {"attentive", "chatty", "looper", "drifter"}
    assert part["acute"] and part["flags"] and part["metrics"] and part["turn_systems"] and part["turn_metrics"]
    assert part["acute_consistency"][0]["repeats"] > 0  # ACUTE's repeated pairs
    assert f"/analysis/datasets/{conversations.dataset_id}/report/" in text
    page = client.get(reverse("analysis:dataset_report", args=[conversations.dataset_id])).content.decode()
    assert 'id="t-conversation_systems"' in page and 'id="t-conversation_acute"' in page


def test_the_login_line_names_where_an_operators_demo_password_is_and_never_prints_it(monkeypatch):
    """Security review (informational): with DEMO_PASSWORD set, the demo printed demo-password anyway."""
    from analysis.management.commands.demo import login_hint

    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    assert login_hint() == "login: demo / demo-password"
    monkeypatch.setenv("DEMO_PASSWORD", "s3cret-lab-pass")
    assert login_hint() == "login: demo / the password in DEMO_PASSWORD"
    assert "s3cret" not in login_hint()
