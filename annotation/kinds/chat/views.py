"""The chat page's own address: `/a/<token>/chat/` (GET: the chat's state, made at the first call;
POST `action` = send | retry | end | flag | rate). JSON both ways; the CSRF token of the task form.

Only the annotator who holds the task reaches it (the task page's own check), only while the task
is open. Every answer is the chat's state after the action (`service.chat_state`), so a page that
lost a response (a dropped connection) shows the truth at its next call; a refusal says why in
`error`, with the state beside it.

Inside MTurk's frame the same chat is at `/mturk/<survey token>/chat/`: there the browser's cookies
are third-party (often blocked), so the assignment is named as the frame's task form names it
(`hitId`, `assignmentId` and the assignment's own token, sent by chat.js with every request), which
guards it as it guards that form's POST.
"""

from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotation.kinds.chat import service
from annotation.models import Assignment, Survey
from annotation.views.task import assignment_for_annotator

ACTIONS = ("send", "retry", "end", "flag", "rate")
NOT_YOURS = "This task belongs to another annotator or browser."


def _json(chat, status=200, error=""):
    body = {"state": service.chat_state(chat)} if chat is not None else {}
    if error:
        body["error"] = error
    return JsonResponse(body, status=status)


def _act(request, chat, action):
    """Do `action` on `chat`; the chat's state after it (the service's own when it knows it)."""
    if action == "send":
        telemetry = service.message_telemetry(
            pasted_chars=request.POST.get("pasted_chars"), idle_ms=request.POST.get("idle_ms")
        )
        return service.chat_send(
            chat, text=request.POST.get("text", ""), client_key=request.POST.get("key", ""), telemetry=telemetry
        )
    if action == "retry":
        return service.chat_retry(chat)
    if action == "end":
        return service.chat_state(service.chat_end(chat))
    try:
        turn = int(request.POST.get("turn", ""))
    except ValueError:
        raise service.ChatRefused("No such reply in this conversation.", status=400) from None
    if action == "rate":
        chat = service.chat_rate(chat, turn=turn, key=request.POST.get("key", ""), score=request.POST.get("score", ""))
    else:
        chat = service.chat_flag(chat, turn=turn, key=request.POST.get("key", ""), on=request.POST.get("on") == "1")
    return service.chat_state(chat)


def _chat_answer(request, assignment):
    """The chat of `assignment` (already known to be the caller's): its state, or the action's result."""
    if assignment.hit.survey.task_type != "chat":
        return JsonResponse({"error": "This task has no chat."}, status=404)
    if assignment.status != Assignment.Status.ACTIVE:
        return JsonResponse({"error": "This task has been handed in.", "done": True}, status=410)
    if assignment.expires_at and assignment.expires_at <= timezone.now():
        return JsonResponse({"error": "This task ran out of time: reload the page."}, status=410)
    chat = service.chat_for(assignment)
    if request.method == "GET":
        return _json(chat)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        return _json(chat, status=400, error="Unknown action.")
    try:
        state = _act(request, chat, action)
    except service.ChatRefused as refusal:
        return _json(service.reloaded(chat), status=refusal.status, error=str(refusal))
    return JsonResponse({"state": state})


@require_http_methods(["GET", "POST"])
def chat_api(request, token):
    assignment, refused = assignment_for_annotator(request, token, progress=False)
    if refused:
        return JsonResponse({"error": NOT_YOURS}, status=403)
    return _chat_answer(request, assignment)


@csrf_exempt  # inside MTurk's frame the CSRF cookie is third-party; the assignment token guards the POST
@require_http_methods(["GET", "POST"])
def mturk_chat_api(request, token):
    params = request.POST if request.method == "POST" else request.GET
    fields = [params.get(name, "") for name in ("hitId", "assignmentId", "assignment_token")]
    assignment = None
    if all(fields):
        assignment = (
            Assignment.objects.select_related("hit__survey", "annotator")
            .filter(
                hit__survey__token=token,
                hit__survey__provider=Survey.Provider.MTURK,
                hit__external_id=fields[0],
                external_id=fields[1],
                token=fields[2],
            )
            .first()
        )
    if assignment is None or assignment.annotator_id is None:
        return JsonResponse({"error": NOT_YOURS}, status=403)
    return _chat_answer(request, assignment)
