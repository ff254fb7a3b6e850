"""ADEM pages and API with names unique per owner, pk-addressed model pages, staff reading, field-naming 400s."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from matplotlib.backends.backend_agg import FigureCanvasAgg

from scoring.adem.plots import learning_curve_figure
from scoring.models import AdemModel, MetricRun
from scoring.services.adem.training import adem_train
from scoring.services.metrics.chunks import metric_chunk_compute
from scoring.services.metrics.compute import metrics_compute
from scoring.services.tokens import api_token_create
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

FAST = {"max_epochs": 3, "patience": 3}
TRIPLE = {"context": ["do you like dogs ?"], "reference": "yes i do", "response": "i have a dog"}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


@pytest.fixture
def demo(usr, researcher):
    return adem_train(dataset=usr, name="demo", encoder="glove", owner=researcher, config=FAST)


def _post_json(url, payload, key):
    return Client().post(
        url, data=json.dumps(payload), content_type="application/json", headers={"Authorization": f"Bearer {key}"}
    )


@pytest.mark.shared_data
def test_another_researcher_may_name_a_model_demo_and_learns_nothing_of_the_first(
    client, demo, other_researcher, shared_data, django_capture_on_commit_callbacks
):
    """Security review 18.4: 'a model named demo already exists' told B that A had one."""
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    theirs = load_dataset_records(records=records, name="bobs-usr", owner=other_researcher)
    load_rating_records(records=ratings, dataset=theirs, survey_name="bobs-overall", owner=other_researcher)
    client.force_login(other_researcher)
    form = {"name": "demo", "dataset": theirs.pk, "encoder": "glove", "variant": "full", "seed": 0}
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("scoring:adem_train"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert sorted(AdemModel.objects.filter(name="demo").values_list("owner__username", flat=True)) == ["alice", "bob"]
    with django_capture_on_commit_callbacks(execute=False):
        again = client.post(reverse("scoring:adem_train"), form).content.decode()
    assert "You already have a model with this name" in again


@pytest.mark.shared_data
def test_model_pages_are_addressed_by_pk_and_staff_read_every_owners(client, demo, other_researcher, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("scoring:adem_model", args=[demo.pk]))
    assert page.status_code == 200 and "owned by alice" in page.content.decode()
    assert reverse("scoring:adem_model_score", args=[demo.pk]) in page.content.decode()
    # a name in a URL always means the caller's own model, for staff too
    assert client.get(reverse("scoring:adem_model_by_name", args=["demo"])).status_code == 404
    client.force_login(demo.owner)
    old_link = client.get(reverse("scoring:adem_model_by_name", args=["demo"]))
    assert old_link.status_code == 302 and old_link.url == reverse("scoring:adem_model", args=[demo.pk])


@pytest.mark.shared_data
def test_score_api_by_name_finds_the_callers_own_model_when_two_owners_share_the_name(usr, demo, other_researcher):
    theirs = adem_train(dataset=usr, name="demo", encoder="glove", owner=other_researcher, seed=5, config=FAST)
    mine = _post_json(
        reverse("scoring:adem_score", args=["demo"]), {"triples": [TRIPLE]}, api_token_create(user=demo.owner)
    )
    bobs_key = api_token_create(user=other_researcher)
    bobs = _post_json(reverse("scoring:adem_score", args=["demo"]), {"triples": [TRIPLE]}, bobs_key)
    assert mine.status_code == bobs.status_code == 200
    assert mine.json()["scores"] != bobs.json()["scores"]
    by_pk = _post_json(reverse("scoring:adem_model_score", args=[theirs.pk]), {"triples": [TRIPLE]}, bobs_key)
    assert by_pk.json()["scores"] == bobs.json()["scores"]
    assert (
        _post_json(reverse("scoring:adem_model_score", args=[demo.pk]), {"triples": [TRIPLE]}, bobs_key).status_code
        == 404
    )


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("triple", "field"),
    [
        ({"context": [], "reference": "", "response": ""}, "response"),  # the review's request (scored 4.16)
        ({"context": [], "reference": "yes", "response": "no"}, "context"),
        ({"context": "  ", "reference": "yes", "response": "no"}, "context"),
        ({"context": ["hi"], "reference": "", "response": "no"}, "reference"),
    ],
)
def test_score_api_answers_an_empty_field_with_a_400_naming_it(demo, triple, field):
    response = _post_json(
        reverse("scoring:adem_score", args=["demo"]), {"triples": [triple]}, api_token_create(user=demo.owner)
    )
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == field and body["index"] == 0 and f"the {field} is empty" in body["error"]


@pytest.mark.shared_data
def test_c_adem_needs_no_reference_in_the_api(usr, researcher):
    adem_train(dataset=usr, name="ctx", encoder="glove", variant="context", owner=researcher, config=FAST)
    payload = {"triples": [{**TRIPLE, "reference": ""}]}
    response = _post_json(reverse("scoring:adem_score", args=["ctx"]), payload, api_token_create(user=researcher))
    assert response.status_code == 200 and len(response.json()["scores"]) == 1


@pytest.mark.shared_data
def test_compute_metrics_when_everything_is_up_to_date_says_so_and_starts_no_run(researcher_client, usr):
    url = reverse("scoring:dataset_metrics", args=[usr.pk])
    run = metrics_compute(dataset=usr, metrics=None, dispatch=False)
    for chunk in run.chunks.all():
        metric_chunk_compute(chunk=chunk)
    n_metrics = len(run.metrics)
    page = researcher_client.post(url, follow=True).content.decode()
    assert f"All {n_metrics} metrics are up to date" in page and "Computing" not in page
    assert MetricRun.objects.count() == 1


@pytest.mark.shared_data
def test_train_page_names_the_metric_without_a_blank_and_loads_its_script(researcher_client, usr):
    page = researcher_client.get(reverse("scoring:adem_train")).content.decode()
    assert "adem:NAME" in page and "adem:." not in page
    assert "scoring/adem_train.js" in page and 'data-busy-text="Starting training' in page


def test_experiments_page_disables_its_run_button_once_sent(researcher_client):
    page = researcher_client.get(reverse("scoring:adem_experiments")).content.decode()
    assert "scoring/busy_forms.js" in page and 'data-busy-text="Starting experiment' in page


def test_the_learning_curves_legend_covers_neither_axis_labels():
    progress = [{"epoch": e, "train_loss": 1.0 / e, "val_pearson": 0.1 * e} for e in range(1, 11)]
    figure = learning_curve_figure(progress)
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    loss_axis, pearson_axis = figure.axes
    legend = loss_axis.get_legend().get_window_extent(renderer)
    labels = [t.get_window_extent(renderer) for t in pearson_axis.get_yticklabels() + loss_axis.get_yticklabels()]
    labels += [pearson_axis.yaxis.label.get_window_extent(renderer), loss_axis.yaxis.label.get_window_extent(renderer)]
    assert not [box for box in labels if box.width and legend.overlaps(box)]
    assert legend.y0 >= loss_axis.get_window_extent(renderer).y1 - 1  # above the plot, not on the lines
    assert [t.get_text() for t in loss_axis.get_legend().get_texts()] == ["training loss", "validation Pearson"]


@pytest.mark.shared_data
def test_the_compute_button_is_disabled_while_a_run_is_in_progress(researcher_client, usr):
    url = reverse("scoring:dataset_metrics", args=[usr.pk])
    MetricRun.objects.create(dataset=usr, metrics=["bleu1"], total_chunks=3, status=MetricRun.Status.RUNNING)
    page = researcher_client.get(url).content.decode()
    assert '<button type="submit" disabled>Compute metrics</button>' in page and "A run is in progress" in page
    MetricRun.objects.update(status=MetricRun.Status.DONE)
    assert '<button type="submit">Compute metrics</button>' in researcher_client.get(url).content.decode()


@pytest.mark.shared_data
def test_the_compute_metrics_command_says_when_everything_is_up_to_date(usr):
    call_command("compute_metrics", dataset="usr-pc", metric=["bleu1"], no_progress=True, stdout=StringIO())
    out = StringIO()
    call_command("compute_metrics", dataset="usr-pc", metric=["bleu1"], no_progress=True, stdout=out)
    assert "All 1 metric was already up to date." in out.getvalue()
