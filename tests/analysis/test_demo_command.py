"""`manage.py demo`, the README's main job, runs the whole pipeline on the generated study."""

import io
import re

import pytest
from django.core.management import call_command

from annotation.models import Rating, Survey
from scoring.models import AdemModel, MetricScore

pytestmark = pytest.mark.django_db


def test_demo_runs_the_whole_pipeline_and_prints_links_on_the_given_address():
    out = io.StringIO()
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

    # Every survey link, the two printed by create_survey included, uses the address given.
    links = re.findall(r"https?://[^\s/]+/s/[\w-]+/", text)
    assert links and all(link.startswith("http://demo.example:8765/s/") for link in links)
    assert f"http://demo.example:8765/s/{live.token}/" in text
    assert "Demo ready in" in text
    # Two simulated raters are careless and always excluded; a careful one may land just under
    # kappa 0.2 (each run's HIT layout is seeded by the survey's secret token), never most of them.
    annotators, excluded = map(int, re.search(r"(\d+) annotators, (\d+) excluded", text).groups())
    assert annotators == 12 and 2 <= excluded <= 6  # 2-4 in 6 runs of the simulation alone
    careless = {line.split(":")[0].strip() for line in text.splitlines() if "median" in line and "EXCLUDED" in line}
    assert len(careless) == 2  # excluded by the speed rule too, which only the careless break
