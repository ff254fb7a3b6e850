import io
import statistics

from django.core.management import call_command

from annotation.models import Dataset, Response
from annotation.services.demo_data import SYSTEMS, demo_records


def test_demo_records_are_seeded_and_valid_import_records():
    records = demo_records(seed=3)
    assert records == demo_records(seed=3)
    assert records != demo_records(seed=4)
    assert len(records) == 60
    assert len({r["context_id"] for r in records}) == 60
    assert all(2 <= len(r["context"]) <= 5 for r in records)
    assert all(turn["speaker"] in ("A", "B") for r in records for turn in r["context"])
    assert all(1 <= len(r["references"]) <= 2 for r in records)
    assert all([x["system"] for x in r["responses"]] == list(SYSTEMS) for r in records)


def test_demo_systems_have_distinct_quality_profiles():
    records = demo_records()
    quality = {
        system: statistics.mean(x["demo_quality"] for r in records for x in r["responses"] if x["system"] == system)
        for system in SYSTEMS
    }
    assert quality["human"] > quality["vhred"] > quality["lstm"] > quality["hred"]
    assert quality["vhred"] > quality["retrieval"] > quality["hred"]
    assert all(0 <= x["demo_quality"] <= 1 for r in records for x in r["responses"])
    generic = {x["text"] for r in records for x in r["responses"] if x["system"] == "hred"}
    assert len(generic) <= 10


def test_load_demo_is_idempotent_and_creates_a_login_that_owns_the_study(client, db):
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    call_command("load_demo", stdout=out)
    dataset = Dataset.objects.get(name="demo")
    assert Dataset.objects.count() == 1
    assert dataset.contexts.count() == 60
    assert dataset.systems.count() == 5
    assert Response.objects.filter(context__dataset=dataset).count() == 300
    assert "demo_quality" in Response.objects.filter(context__dataset=dataset).first().meta
    assert "Already loaded" in out.getvalue()
    assert "Log in as 'demo' with password 'demo-password'" in out.getvalue()
    assert client.login(username="demo", password="demo-password")
    assert dataset.owner.username == "demo"
    assert "demo-001" in client.get(f"/datasets/{dataset.pk}/").content.decode()


def test_load_demo_never_prints_an_operators_demo_password(db, monkeypatch):
    """Security review (informational): a DEMO_PASSWORD of the operator's own stays out of the output."""
    monkeypatch.setenv("DEMO_PASSWORD", "s3cret-lab-pass")
    out = io.StringIO()
    call_command("load_demo", stdout=out, stderr=io.StringIO())
    assert "s3cret" not in out.getvalue()
    assert "Log in as 'demo' with the password in DEMO_PASSWORD." in out.getvalue()
