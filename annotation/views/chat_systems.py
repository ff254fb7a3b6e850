"""Chat systems pages: the researcher's systems (list, add, change, remove) and a "test" that sends one
message. Owner-only: anyone else, staff included, meets a 404, as for a system that does not exist."""

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.forms.chat_systems import ChatSystemForm, ChatSystemTestForm
from annotation.models import ChatSystem
from annotation.services.chat_systems.registry import (
    EDITABLE_FIELDS,
    ChatSystemRefusal,
    chat_system_create,
    chat_system_delete,
    chat_system_update,
    key_state,
)
from annotation.services.chat_systems.replies import ChatFailure, chat_reply


def _own_systems(user):
    return ChatSystem.objects.filter(owner=user)


@login_required
@require_GET
def chat_system_list(request):
    systems = list(_own_systems(request.user))
    for system in systems:
        system.key_state = key_state(system)
    return render(request, "annotation/chat_systems/list.html", {"systems": systems})


@login_required
@require_http_methods(["GET", "POST"])
def chat_system_add(request):
    form = ChatSystemForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in EDITABLE_FIELDS}
        system = chat_system_create(owner=request.user, **fields)
        messages.success(request, f"Chat system {system.name} added: try it with the test below.")
        return redirect("annotation:chat_system_edit", pk=system.pk)
    return render(request, "annotation/chat_systems/form.html", {"form": form, "system": None})


@login_required
@require_http_methods(["GET", "POST"])
def chat_system_edit(request, pk):
    system = get_object_or_404(_own_systems(request.user), pk=pk)
    form = ChatSystemForm(request.POST or None, instance=system, owner=request.user)
    if request.method == "POST" and form.is_valid():
        chat_system_update(system=system, **{name: form.cleaned_data[name] for name in EDITABLE_FIELDS})
        messages.success(request, f"Chat system {system.name} saved.")
        return redirect("annotation:chat_system_edit", pk=system.pk)
    if request.method == "POST":  # the form's instance took the refused values: show the stored ones
        system.refresh_from_db()
    return render(request, "annotation/chat_systems/form.html", _edit_context(system, form))


def _edit_context(system, form, test_form=None, **extra):
    return {
        "form": form,
        "system": system,
        "key_state": key_state(system),
        "test_form": test_form or ChatSystemTestForm(),
        **extra,
    }


@login_required
@require_POST
def chat_system_test(request, pk):
    """Send one message to the system and show its reply, or the plain reason there is none."""
    system = get_object_or_404(_own_systems(request.user), pk=pk)
    test_form = ChatSystemTestForm(request.POST)
    context = {}
    if test_form.is_valid():
        message = test_form.cleaned_data["message"]
        try:
            # a fresh key: a test is always asked, never answered from the replay cache
            reply = chat_reply(
                system=system, messages=[{"role": "user", "content": message}], idempotency_key=f"test-{uuid.uuid4()}"
            )
            context["test_reply"] = reply
        except ChatFailure as failure:
            context["test_failure"] = failure
    form = ChatSystemForm(instance=system, owner=request.user)
    return render(request, "annotation/chat_systems/form.html", _edit_context(system, form, test_form, **context))


@login_required
@require_http_methods(["GET", "POST"])
def chat_system_remove(request, pk):
    system = get_object_or_404(_own_systems(request.user), pk=pk)
    if request.method == "POST":
        try:
            chat_system_delete(system=system)
        except ChatSystemRefusal as refusal:
            messages.error(request, str(refusal))
            return redirect("annotation:chat_system_list")
        messages.success(request, f"Chat system {system.name} removed.")
        return redirect("annotation:chat_system_list")
    return render(request, "annotation/chat_systems/remove.html", {"system": system})
