"""The page that trains a learned evaluator (issue 41); its run, model and scoring API are ADEM's pages."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from scoring.forms.learned import LearnedTrainForm
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.learned.jobs import learned_train_queue


@login_required
def train(request):
    form = LearnedTrainForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = learned_train_queue(
                dataset=data["dataset"],
                name=data["name"],
                owner=request.user,
                kind=data["kind"],
                folds=data["folds"],
                seed=data["seed"],
                config=form.config(),
            )
        except AdemRefusal as error:
            form.add_error(None, str(error))
        else:
            return redirect("scoring:adem_run", run_id=run.pk)
    return render(request, "scoring/adem/train_learned.html", {"form": form})
