"""The researcher's API tokens for the ADEM scoring endpoint: list, create (key shown once), revoke.

Only a key's sha256 is stored, so the list can never show a key again; the page that shows a new
key is the response to the POST that made it (never cached, never redirected through a session).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from scoring.models import ApiToken
from scoring.services.tokens import api_token_create, api_token_revoke


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for, e.g. the script or machine that uses it.")


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request):
    form = TokenForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        new_key = api_token_create(user=request.user, name=form.cleaned_data["name"])
        form = TokenForm()
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "scoring/tokens/list.html", {"form": form, "tokens": tokens, "new_key": new_key})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_revoke(request, token_id):
    """GET asks for confirmation; POST revokes."""
    token = get_object_or_404(ApiToken.objects.filter(user=request.user), pk=token_id)
    if request.method == "POST":
        name = api_token_revoke(user=request.user, token_id=token.pk)
        messages.success(request, f"Revoked {name!r}: scripts using it are refused from now on.")
        return redirect("scoring:api_tokens")
    return render(request, "scoring/tokens/revoke.html", {"token": token})
