"""ADEM pages (model list, delete, train form, live progress, learning curve, experiments) and the scoring API."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from annotation.selectors import datasets_visible_to
from config.security.json_input import json_loads
from scoring import adem
from scoring.forms.adem import ExperimentForm, PretrainForm, TrainForm
from scoring.models import AdemModel, TrainingRun
from scoring.services.adem import progress as services_adem_progress
from scoring.services.adem.delete import AdemModelBusy, adem_model_busy, adem_model_delete, adem_model_scores
from scoring.services.adem.jobs import ExperimentRunning, adem_experiment_queue, adem_train_queue, vhred_pretrain_queue
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.scoring import adem_score
from scoring.services.adem.vhred import corpus_store
from scoring.services.tokens import api_token_user

MAX_TRIPLES = 1000


def _mine(queryset, user):
    """What the user may read: their own rows; staff read everyone's (admins read results).

    Model pages are addressed by primary key, so a staff reader never meets two models of the
    same name; a name in a URL (`adem/<name>/score`, `adem/<name>/`) always means the caller's own.
    """
    return queryset if user.is_staff else queryset.filter(owner=user)


@login_required
def model_list(request):
    models = _mine(AdemModel.objects.select_related("dataset", "owner"), request.user)
    # ?dataset=: the models trained on one dataset (the pipeline bar's ADEM/judges step); one the
    # user may not read is a 404, as one that does not exist.
    dataset, value = None, request.GET.get("dataset", "")
    if value.isascii() and value.isdigit():
        dataset = get_object_or_404(datasets_visible_to(user=request.user), pk=int(value))
        models = models.filter(dataset=dataset)
    return render(request, "scoring/adem/model_list.html", {"models": models, "dataset": dataset})


@login_required
def model_detail(request, model_id):
    model = get_object_or_404(_mine(AdemModel.objects.select_related("owner"), request.user), pk=model_id)
    run = model.runs.order_by("-created_at").first()
    return render(request, "scoring/adem/model_detail.html", {"model": model, "run": run})


@login_required
@require_http_methods(["GET", "POST"])
def model_delete(request, model_id):
    """GET: what deleting the model removes, and a button; POST: delete. The owner's alone (staff
    may read others' models, never delete them): anyone else meets a 404, as for a model that is not."""
    model = get_object_or_404(AdemModel.objects.filter(owner=request.user), pk=model_id)
    context = {
        "model": model,
        "busy": adem_model_busy(model=model),
        "n_scores": adem_model_scores(model=model).count(),
        "n_runs": model.runs.count(),
    }
    if request.method == "POST":
        try:
            scores = adem_model_delete(model=model)
        except AdemModelBusy as busy:
            context["busy"] = str(busy)
            return render(request, "scoring/adem/model_delete.html", context, status=409)
        checkpoint = "its checkpoint file and " if model.checkpoint_path else ""
        plural = "s" if scores != 1 else ""
        messages.success(
            request,
            f"ADEM model {model.name} deleted, with {checkpoint}its {scores} {model.metric_name} score{plural}.",
        )
        return redirect("scoring:adem_models")
    return render(request, "scoring/adem/model_delete.html", context)


@login_required
def model_by_name(request, name):
    """Old name-based links: the caller's own model of that name."""
    model = get_object_or_404(AdemModel.objects.filter(owner=request.user), name=name)
    return redirect("scoring:adem_model", model_id=model.pk)


@login_required
def train(request):
    form = TrainForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = adem_train_queue(
                dataset=data["dataset"],
                name=data["name"],
                owner=request.user,
                encoder=data["encoder"],
                precision=data["precision"],
                variant=data["variant"],
                seed=data["seed"],
                folds=data["folds"],
            )
        except AdemRefusal as error:
            form.add_error(None, str(error))
        else:
            return redirect("scoring:adem_run", run_id=run.pk)
    return render(request, "scoring/adem/train.html", {"form": form, "pretrain_form": PretrainForm()})


@login_required
@require_POST
def pretrain(request):
    form = PretrainForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "scoring/adem/train.html", {"form": TrainForm(user=request.user), "pretrain_form": form})
    upload = form.cleaned_data["corpus"]
    corpus_path = corpus_store(upload=upload) if upload else None
    run = vhred_pretrain_queue(
        owner=request.user,
        corpus_path=corpus_path,
        epochs=form.cleaned_data["epochs"],
        resume=form.cleaned_data["resume"],
    )
    return redirect("scoring:adem_run", run_id=run.pk)


@login_required
def experiments(request):
    form = ExperimentForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = adem_experiment_queue(
                dataset=data["dataset"],
                owner=request.user,
                experiment=data["experiment"],
                encoder=data["encoder"],
                variant=data["variant"],
                seed=data["seed"],
                folds=data["folds"],
            )
        except ExperimentRunning as already:
            # A double submit lands where the first one did: the open run's page, saying why.
            messages.info(request, str(already))
            run = already.run
        return redirect("scoring:adem_run", run_id=run.pk)
    runs = _mine(TrainingRun.objects.filter(kind=TrainingRun.Kind.EXPERIMENT), request.user)[:20]
    return render(request, "scoring/adem/experiments.html", {"form": form, "runs": runs})


def _run(request, run_id):
    return get_object_or_404(
        _mine(TrainingRun.objects.select_related("adem_model", "dataset"), request.user), pk=run_id
    )


@login_required
def run_detail(request, run_id):
    run = _run(request, run_id)
    # An experiment records no epochs, nor does a run that ended before its first: no empty axes then.
    open_run = run.status in (TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING)
    show_curve = run.kind != TrainingRun.Kind.EXPERIMENT and (bool(run.progress) or open_run)
    # Until the first epoch the curve would be empty axes: the page says what the run does instead.
    context = {
        "run": run,
        "show_curve": show_curve,
        "phase_line": services_adem_progress.phase_line(run),
        "phase_percent": _percent(services_adem_progress.phase_fraction(run)),
    }
    return render(request, "scoring/adem/run.html", context)


def _percent(fraction):
    return None if fraction is None else round(100 * fraction, 1)


@login_required
def run_progress(request, run_id):
    """What the progress page polls: status, the epochs so far, the result or the error."""
    run = _run(request, run_id)
    # A pre-training records where its checkpoint went for the command line; a page needs only its hash.
    result = {key: value for key, value in run.result.items() if key != "checkpoint"}
    return JsonResponse(
        {
            "status": run.status,
            "progress": run.progress,
            # loading the encoder, encoding n of m texts, the epoch: scoring.services.adem.progress
            "phase": run.phase,
            "phase_text": services_adem_progress.phase_line(run),
            "phase_fraction": services_adem_progress.phase_fraction(run),
            "result": result,
            "error": run.error,
        }
    )


@login_required
def run_curve(request, run_id):
    """Learning curve (training loss and validation correlation per epoch) as SVG."""
    return HttpResponse(adem.plots.learning_curve_svg(_run(request, run_id).progress), content_type="image/svg+xml")


def _refused(error):
    """A 400 that names the input at fault, so a script can point at it."""
    body = {"error": str(error)}
    if error.field is not None:
        body["field"] = error.field
    if error.index is not None:
        body["index"] = error.index
    return JsonResponse(body, status=400)


@csrf_exempt
@require_POST
def score_api(request, name=None, model_id=None):
    """POST {"triples": [{"context": [...], "reference": "...", "response": "..."}, ...]} → {"scores": [...]}.

    Authenticated by `Authorization: Bearer <token>` (scripts; no cookies, so no CSRF risk),
    or by the session, in which case Django's CSRF check runs as on any form post.
    """
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        user = api_token_user(key=header[len("Bearer ") :].strip())
        if user is None:
            return JsonResponse({"error": "invalid token"}, status=401)
    elif request.user.is_authenticated:
        rejected = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
        if rejected is not None:
            return JsonResponse({"error": "CSRF check failed: send the X-CSRFToken header"}, status=403)
        user = request.user
    else:
        return JsonResponse({"error": "authentication required (session or Bearer token)"}, status=401)
    try:
        if model_id is not None:
            model = _mine(AdemModel.objects.all(), user).get(pk=model_id)
        else:
            model = AdemModel.objects.get(owner=user, name=name)  # a name means one's own model
    except AdemModel.DoesNotExist:
        # JSON like every other answer here; one message whether the model is absent or another
        # researcher's, so a caller learns nothing about models it may not read.
        return JsonResponse({"error": "no such ADEM model"}, status=404)
    try:
        body = json_loads(request.body)
    except ValueError as error:
        return JsonResponse({"error": f"body is not JSON: {error}"}, status=400)
    triples = body.get("triples") if isinstance(body, dict) else None
    if not isinstance(triples, list):
        return JsonResponse(
            {"error": 'expected {"triples": [{"context", "reference", "response"}, ...]}', "field": "triples"},
            status=400,
        )
    if len(triples) > MAX_TRIPLES:
        return JsonResponse({"error": f"at most {MAX_TRIPLES} triples per request", "field": "triples"}, status=400)
    try:
        scores = adem_score(model=model, triples=triples)
    except AdemRefusal as error:
        return _refused(error)
    return JsonResponse({"model": model.name, "metric": model.metric_name, "scores": scores})
