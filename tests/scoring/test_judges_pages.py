"""Judges pages and commands: a judge is its researcher's alone; adding refuses bad input; pairs."""

import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from scoring.judges import prompts
from scoring.judges.pairwise import PairItem
from scoring.models import AdemModel, Judge, JudgeUsage, MetricRun, MetricScore
from scoring.selectors.judges import judges_changeable_by, judges_visible_to
from scoring.selectors.pipeline import scoring_steps
from scoring.services.judges.judging import judge_pairs
from scoring.services.judges.registry import judge_named
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS, make_judge

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def assigned_key_variables(settings):
    """The operator assigned these to everyone; the server's own secrets by mistake, which the
    name rule still refuses."""
    assigned = ("VLLM_KEY", "DJANGO_SECRET_KEY", "AWS_SECRET_ACCESS_KEY", "PROLIFIC_API_TOKEN")
    settings.JUDGE_KEY_VARIABLES = {"*": assigned}


FORM = {
    "name": "qwen",
    "base_url": "http://127.0.0.1:8000/v1",
    "model": "Qwen/Qwen2.5-7B-Instruct",
    "api_key_env": "",
    "template": "rating",
    "temperature": "0",
    "samples": "1",
    "max_tokens": "16",
    "concurrency": "8",
}


def test_the_judges_page_is_linked_from_the_adem_page_and_the_metrics_pages(researcher_client, researcher):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    url = reverse("scoring:judges")
    assert f'href="{url}"' in researcher_client.get(reverse("scoring:adem_models")).content.decode()
    # the top bar's Metrics (where the judges' pages sit) leads there too
    assert f'href="{url}"' in researcher_client.get(reverse("scoring:metrics_index")).content.decode()
    assert (
        f'href="{url}"' in researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    )


def test_adding_a_judge_on_the_page_creates_it_for_the_poster(researcher_client, researcher):
    response = researcher_client.post(reverse("scoring:judges"), FORM)
    judge = Judge.objects.get()
    assert response.status_code == 302 and response.url == reverse("scoring:judge_detail", args=[judge.pk])
    assert (judge.owner, judge.metric_name, judge.model) == (researcher, "judge:qwen", "Qwen/Qwen2.5-7B-Instruct")


def test_adding_a_pairwise_judge_says_it_judges_pairs_not_a_metric(researcher_client):
    page = researcher_client.post(reverse("scoring:judges"), {**FORM, "template": "pairwise"}, follow=True)
    text = page.content.decode()
    assert "Judge added: judge a pairwise study&#x27;s pairs with it below." in text
    assert "compute its metric" not in text


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("api_key_env", "sk-abcdef", "NAME of the environment variable"),
        ("api_key_env", "MY-KEY", "environment variable name"),
        ("api_key_env", "DJANGO_SECRET_KEY", "cannot be a judge&#x27;s key variable"),
        ("api_key_env", "AWS_SECRET_ACCESS_KEY", "cannot be a judge&#x27;s key variable"),
        ("api_key_env", "PROLIFIC_API_TOKEN", "cannot be a judge&#x27;s key variable"),
        ("base_url", "not a url", "Enter a valid URL"),
        ("base_url", "http://169.254.169.254/latest/meta-data", "link-local address"),
        ("base_url", "http://[fe80::1]:8000/v1", "link-local address"),
        ("base_url", "http://[::ffff:169.254.169.254]/latest", "link-local address"),
        ("base_url", "ftp://127.0.0.1/v1", "an http:// or https:// address, not ftp://"),
        ("samples", "0", "greater than or equal to 1"),
        ("samples", "-2", "greater than or equal to 1"),
        ("concurrency", "-5", "greater than or equal to 1"),
        ("concurrency", "0", "greater than or equal to 1"),
        ("max_tokens", "-1", "greater than or equal to 1"),
        ("name", "has space", "Use letters, digits"),
        ("price_per_million_prompt_tokens", "-3", "greater than or equal to 0"),
        ("price_per_million_completion_tokens", "-0.5", "greater than or equal to 0"),
    ],
)
def test_bad_input_on_the_add_form_says_what_and_creates_nothing(researcher_client, field, value, message):
    page = researcher_client.post(reverse("scoring:judges"), {**FORM, field: value}).content.decode()
    assert message in page and not Judge.objects.exists()


def test_the_add_form_tells_the_browser_the_bounds_the_model_keeps(researcher_client):
    page = researcher_client.get(reverse("scoring:judges")).content.decode()
    for name, low, high in (("samples", 1, 20), ("max_tokens", 1, 4096), ("concurrency", 1, 256)):
        tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', page).group(0)
        assert f'min="{low}"' in tag and f'max="{high}"' in tag, tag


def test_no_judges_is_said_in_a_paragraph_not_in_a_table_row_a_phone_scrolls_sideways(
    researcher_client, researcher, chat_server
):
    page = researcher_client.get(reverse("scoring:judges")).content.decode()
    assert '<p id="no-judges">No judges yet' in page and 'id="judges"' not in page
    make_judge(researcher, chat_server, name="rater")
    page = researcher_client.get(reverse("scoring:judges")).content.decode()
    assert 'id="no-judges"' not in page and '<table id="judges">' in page and "judge:rater" in page


def test_a_second_judge_of_the_same_name_is_refused(researcher_client, researcher, chat_server):
    make_judge(researcher, chat_server, name="qwen")
    page = researcher_client.post(reverse("scoring:judges"), FORM).content.decode()
    assert "already have a judge with this name" in page and Judge.objects.count() == 1


def test_another_researcher_and_staff_neither_see_nor_remove_a_judge(
    client, researcher, other_researcher, admin_user, chat_server
):
    judge = make_judge(researcher, chat_server, name="secret-judge")
    for user in (other_researcher, admin_user):
        client.force_login(user)
        assert "secret-judge" not in client.get(reverse("scoring:judges")).content.decode()
        assert client.get(reverse("scoring:judge_detail", args=[judge.pk])).status_code == 404
        assert client.post(reverse("scoring:judge_remove", args=[judge.pk])).status_code == 404
        assert judge not in judges_visible_to(user=user) and judge not in judges_changeable_by(user=user)
    assert Judge.objects.filter(pk=judge.pk).exists()


def test_removing_a_judge_removes_its_scores_of_the_owners_datasets(researcher_client, researcher, chat_server):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    judge = make_judge(researcher, chat_server, name="gone")
    response = dataset.contexts.first().responses.first()
    MetricScore.objects.create(response=response, metric="judge:gone", version="v", value=3.0)
    MetricScore.objects.create(response=response, metric="bleu4", version="1", value=0.1)
    assert researcher_client.post(reverse("scoring:judge_remove", args=[judge.pk])).status_code == 302
    assert not Judge.objects.exists()
    assert list(MetricScore.objects.values_list("metric", flat=True)) == ["bleu4"]


def test_the_judge_pages_need_a_login(client, researcher, chat_server):
    judge = make_judge(researcher, chat_server)
    for url in (reverse("scoring:judges"), reverse("scoring:judge_detail", args=[judge.pk])):
        assert client.get(url).status_code == 302


# --- commands -------------------------------------------------------------------------------------


def test_judge_add_list_and_remove_commands(researcher, other_researcher, capsys):
    call_command(
        "judge_add", "--name", "local", "--base-url", "http://127.0.0.1:8000/v1", "--model", "m",
        "--api-key-env", "VLLM_KEY", "--template", "rating-with-reference", "--samples", "3", "--concurrency", "16",
        "--owner", researcher.username,
    )  # fmt: skip
    judge = Judge.objects.get()
    assert (judge.template, judge.samples, judge.concurrency, judge.api_key_env) == (
        "rating-with-reference", 3, 16, "VLLM_KEY",
    )  # fmt: skip
    call_command("judge_list", "--owner", researcher.username)
    out = capsys.readouterr().out
    assert "judge:local" in out and "key from $VLLM_KEY" in out
    call_command("judge_list", "--owner", other_researcher.username)
    assert "no judges yet" in capsys.readouterr().out
    call_command("judge_remove", "--name", "local", "--owner", researcher.username)
    assert not Judge.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--api-key-env", "sk-live-123"], "NAME of an environment variable"),
        (["--samples", "0"], "samples"),
        (["--base-url", "ftp//x"], "base_url"),
        (["--base-url", "ftp://127.0.0.1/v1"], "base_url: Give an http:// or https:// address, not ftp://"),
        (["--base-url", "FTPS://judge.example.org/v1"], "not ftps://"),
        (["--api-key-env", "AWS_SECRET_ACCESS_KEY"], "cannot be a judge's key variable"),
        (["--price-prompt", "-0.15"], "price_per_million_prompt_tokens"),
    ],
)
def test_judge_add_refuses_bad_input_and_creates_nothing(researcher, args, message):
    base = {"--name": "n", "--base-url": "http://127.0.0.1:1/v1", "--model": "m", "--owner": researcher.username}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    with pytest.raises(CommandError, match=message):
        call_command("judge_add", *[part for pair in base.items() for part in pair])
    assert not Judge.objects.exists()


def test_judge_commands_ask_whose_judge_when_several_users_exist(researcher, other_researcher):
    with pytest.raises(CommandError, match="--owner USERNAME"):
        call_command("judge_list")


# --- pairs ------------------------------------------------------------------------------------------


def test_judge_pairs_judges_both_orders_once_and_reports_the_statistics(researcher, chat_server, tmp_path, capsys):
    chat_server.answer = lambda body, n: (
        "Winner: A" if "good reply" in body["messages"][-1]["content"].split("Response B")[0] else "Winner: B"
    )
    make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    rows = [
        {"context": ["hi"], "reply_a": "good reply", "reply_b": "bad", "human_winner": "A"},
        {"context": "hello", "reply_a": "meh", "reply_b": "good reply", "human_winner": "A"},
        {"context": ["yo"], "reply_a": "x", "reply_b": "y", "human_winner": None},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows))
    call_command("judge_pairs", "--judge", "pairs", "--pairs", str(path), "--owner", researcher.username)
    out = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert len(chat_server.requests) == 6
    # pair 1: good reply picked in both orders (agrees); pair 2: good reply is B, humans said A (disagrees);
    # pair 3: neither is "good reply": B picked in both orders (the second shown, twice: inconsistent)
    assert out["agreement_with_humans"] == "0.5" and out["self_consistency"] == "0.6667"
    assert out["position_bias"] == "0.3333"
    call_command("judge_pairs", "--judge", "pairs", "--pairs", str(path), "--owner", researcher.username)
    assert len(chat_server.requests) == 6  # the second time from the cache
    assert JudgeUsage.objects.filter(run=None).count() == 1


def test_judge_pairs_names_the_bad_line_of_the_file(researcher, chat_server, tmp_path):
    make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"reply_a": "a", "reply_b": "b", "human_winner": "A"}\n{"reply_a": "a", "human_winner": "A"}\n')
    with pytest.raises(CommandError, match=r"pairs\.jsonl, line 2: 'reply_b'"):
        call_command("judge_pairs", "--judge", "pairs", "--pairs", str(path), "--owner", researcher.username)
    assert not chat_server.requests


def test_a_rating_judge_is_refused_for_pairs(researcher, chat_server):
    judge = make_judge(researcher, chat_server, name="rater")
    with pytest.raises(Exception, match="rates single responses"):
        judge_pairs(judge=judge, items=[PairItem([], "a", "b", "A")])
    assert judge_named("rater", owner=researcher) == judge and not chat_server.requests


def test_the_pipeline_bar_step_adem_judges_counts_the_viewers_own_judges(researcher, other_researcher, chat_server):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    make_judge(researcher, chat_server, name="mine")
    make_judge(other_researcher, chat_server, name="theirs")
    steps = {step.label: step for step in scoring_steps(dataset, researcher)}
    assert steps["ADEM/judges"].state == "no model yet, 1 judge" and steps["ADEM/judges"].done
    assert steps["ADEM/judges"].url == reverse("scoring:adem_models") + f"?dataset={dataset.pk}"
    # models and judges are read by one query (a union): each row keeps its own columns
    AdemModel.objects.create(name="mine", owner=researcher, dataset=dataset, status="ready", checkpoint_sha256="c" * 64)
    steps = {step.label: step for step in scoring_steps(dataset, researcher)}
    assert steps["ADEM/judges"].state == "1 model ready, 1 judge"
    assert steps["Metrics"].state == "not computed yet"
    MetricRun.objects.create(dataset=dataset, metrics=["adem:mine"], versions={"adem:mine": "c" * 12}, status="done")
    steps = {step.label: step for step in scoring_steps(dataset, researcher)}
    assert steps["Metrics"].state.startswith("1 metric, ") and steps["Metrics"].state.endswith(" not computed")


def test_judging_pairs_again_works_when_an_earlier_race_left_two_usage_rows(researcher, chat_server, tmp_path):
    # The (judge, run, label) constraint cannot stop twins when run is NULL (NULLs are distinct),
    # so two judgings queued at once could leave two rows; later judgings must not fail on them.
    chat_server.answer = lambda body, n: "Winner: A"
    judge = make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    label = "pairs from twins"
    first = JudgeUsage.objects.create(judge=judge, run=None, label=label)
    JudgeUsage.objects.create(judge=judge, run=None, label=label)
    _, statistics = judge_pairs(judge=judge, items=[PairItem(["hi"], "a", "b", "A")], label=label)
    first.refresh_from_db()
    assert (first.prompts, first.requests) == (2, 2) and first.figures == statistics
