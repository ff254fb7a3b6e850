"""A live chat as the annotator's page drives it: open, send, retry, flag, end, and its state.

Every turn is a ConversationTurn the moment it exists: the annotator's message is stored (with the
page's key for it, `client_key`) before the system is asked, the system's reply when it arrives.
The request to the system runs outside any transaction (a slow system holds no lock); before it, a
`ChatAttempt` row in status "pending" is inserted, and the database lets a chat have only one
(constraint `chatattempt_one_in_flight`): a second tab, a double click or a crafted request cannot
send while a reply is awaited. An attempt left pending past the system's timeouts (a worker killed
mid-request) counts as failed at the next look, so a chat can never stay stuck.

A failure (timeout, refused, 5xx, empty reply, a redirect) is stored on its attempt, with the
researcher's message; the annotator reads a plain sentence without the system's name and may try
the turn again (a new attempt, marked `retry`), which is no new turn.
"""

import datetime
import time

from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotation.kinds.conversation.questions import split_aspects
from annotation.models import (
    Assignment,
    ChatAttempt,
    ChatHIT,
    Conversation,
    ConversationTurn,
    Dataset,
    LiveChat,
)
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.chat_systems.replies import ChatFailure, chat_reply

USER_SPEAKER = "user"
MAX_MESSAGE_CHARS = 2000
# The system writes first: it is sent this line, which is no turn of the conversation.
OPENER = "Hello."
OPENING_TURN = -1
# Beyond the system's own timeouts: how long a pending attempt may be before it counts as dead.
STALE_GRACE_SECONDS = 15.0
# What the annotator reads for each failure: never the system's name nor what it sent.
FAILURE_WORDS = {
    "timeout": "The chatbot did not answer in time.",
    "refused": "The chatbot could not be reached.",
    "dropped": "The connection to the chatbot broke off.",
    "http_status": "The chatbot reported an error.",
    "bad_body": "The chatbot sent something that is not a reply.",
    "empty": "The chatbot answered with an empty message.",
    "not_allowed": "The chatbot is not available right now.",
}


class ChatRefused(Exception):
    """A request the chat cannot take now; the message is fit for the annotator. `status`: HTTP."""

    def __init__(self, message, status=409):
        super().__init__(message)
        self.status = status


def failure_words(kind):
    return FAILURE_WORDS.get(kind, "The chatbot did not answer.")


def _chats():
    """Live chats with what every action reads (the survey's settings, the system and its owner)."""
    return LiveChat.objects.select_related("assignment__hit__survey__chat_settings", "chat_system__owner")


def reloaded(chat):
    return _chats().get(pk=chat.pk)


# -- opening a chat ---------------------------------------------------------------------------------
def _new_conversation(*, survey, chat_hit, assignment, annotator):
    """A new live Conversation of the HIT's system, at the end of the dataset (its row locked so two
    chats starting at once do not take the same position)."""
    Dataset.objects.select_for_update().filter(pk=survey.dataset_id).first()
    last = Conversation.objects.filter(dataset_id=survey.dataset_id).aggregate(m=Max("position"))["m"]
    settings = survey.chat_settings
    return Conversation.objects.create(
        dataset_id=survey.dataset_id,
        external_id=f"live-{survey.pk}-{assignment.pk}-{annotator.pk}",
        position=0 if last is None else last + 1,
        system_id=chat_hit.system_id,
        seed=settings.seed_text[:200],
        source=Conversation.Source.LIVE,
        meta={"survey": survey.pk, "assignment": assignment.pk},
    )


def chat_for(assignment):
    """The live chat of `assignment` (with `hit.survey` and `annotator`), made at its first call."""
    chat = _chats().filter(assignment=assignment, annotator=assignment.annotator).first()
    if chat is not None:
        return chat
    survey = assignment.hit.survey
    chat_hit = ChatHIT.objects.get(hit_id=assignment.hit_id)
    try:
        with transaction.atomic():
            conversation = _new_conversation(
                survey=survey, chat_hit=chat_hit, assignment=assignment, annotator=assignment.annotator
            )
            chat = LiveChat.objects.create(
                assignment=assignment,
                annotator=assignment.annotator,
                conversation=conversation,
                chat_system_id=chat_hit.chat_system_id,
            )
    except IntegrityError:  # a second tab opened it at the same moment
        pass
    return _chats().get(assignment=assignment, annotator=assignment.annotator)


# -- reading ------------------------------------------------------------------------------------------
def _stale_limit(system):
    return datetime.timedelta(seconds=system.timeout_seconds + system.connect_timeout_seconds + STALE_GRACE_SECONDS)


def _pending(chat):
    """The chat's pending attempt, or None. One pending past its system's timeouts (its worker is
    gone) is failed here, so the turn may be tried again."""
    return _alive(chat, ChatAttempt.objects.filter(live_chat=chat, status=ChatAttempt.Status.PENDING).first())


def _alive(chat, attempt):
    """`attempt` (a pending one, or None) unless it is past its system's timeouts: then it is failed
    here and None is returned."""
    now = timezone.now()
    if attempt is not None and attempt.started_at < now - _stale_limit(chat.chat_system):
        ChatAttempt.objects.filter(pk=attempt.pk, status=ChatAttempt.Status.PENDING).update(
            status=ChatAttempt.Status.FAILED,
            failure="timeout",
            message="no reply was recorded (the request was lost)",
            finished_at=now,
        )
        return None
    return attempt


def _turns(chat):
    turns = ConversationTurn.objects.filter(conversation_id=chat.conversation_id).order_by("index")
    return list(turns.values_list("index", "speaker", "text"))


def user_turn_count(turns):
    return sum(1 for _, speaker, _ in turns if speaker != SYSTEM_SPEAKER)


def _unanswered_turn(chat, turns):
    """The index of the annotator's last turn when no reply follows it (or the opening, when the
    system writes first and has not), else None."""
    if turns and turns[-1][1] != SYSTEM_SPEAKER:
        return turns[-1][0]
    if not turns and chat.assignment.hit.survey.chat_settings.opening == "bot":
        return OPENING_TURN
    return None


def chat_state(chat, *, known=None):
    """What the page shows: turns, whether a reply is awaited, the last failure, the counts.

    `known`: `(turns, failure kind)` as the action that just ran stored them, with no reply awaited
    (its own request to the system is over): the state is then built without reading them again."""
    settings = chat.assignment.hit.survey.chat_settings
    if known is None:
        pending = _pending(chat) is not None
        turns = _turns(chat)
        unanswered = _unanswered_turn(chat, turns)
        failure = ""
        if unanswered is not None and not pending:
            last = ChatAttempt.objects.filter(live_chat=chat, user_turn=unanswered).order_by("-number").first()
            if last is not None and last.status == ChatAttempt.Status.FAILED:
                failure = failure_words(last.failure)
    else:
        turns, failed = known
        pending = False
        unanswered = _unanswered_turn(chat, turns)
        failure = failure_words(failed) if failed and unanswered is not None else ""
    n_user = user_turn_count(turns)
    ended = chat.ended_at is not None
    return {
        "turns": [{"index": index, "bot": speaker == SYSTEM_SPEAKER, "text": text} for index, speaker, text in turns],
        "pending": pending,
        # The system has a turn to answer and nobody is asking it: the page asks (the opening) or
        # offers "Try again" (after a failure).
        "unanswered": unanswered is not None and not pending,
        "failure": failure,
        "user_turns": n_user,
        "min_turns": settings.min_turns,
        "max_turns": settings.max_turns,
        "ended": ended,
        "can_send": not ended and not pending and unanswered is None and n_user < settings.max_turns,
        "can_end": not ended and not pending and n_user >= settings.min_turns and unanswered is None,
        "flags": chat.flags,
        "turn_scores": chat.turn_scores,
    }


# -- asking the system ----------------------------------------------------------------------------------
def _messages(turns, upto):
    """The OpenAI messages of the conversation up to turn `upto` (the opener when the system starts)."""
    if upto == OPENING_TURN:
        return [{"role": "user", "content": OPENER}]
    messages = [
        {"role": "assistant" if speaker == SYSTEM_SPEAKER else "user", "content": text}
        for index, speaker, text in turns
        if index <= upto
    ]
    if messages and messages[0]["role"] == "assistant":
        messages.insert(0, {"role": "user", "content": OPENER})
    return messages


def _ask(chat, attempt, turns):
    """Ask the system for the reply to `attempt`'s turn, given the conversation's `turns` so far, and
    store what came of it (no transaction is open while it waits). Returns the state as it now
    stands (`chat_state`), read again only when the reply came too late to be stored."""
    started = time.monotonic()
    key = f"chat{chat.pk}-turn{attempt.user_turn}-attempt{attempt.number}"
    try:
        reply = chat_reply(system=chat.chat_system, messages=_messages(turns, attempt.user_turn), idempotency_key=key)
    except ChatFailure as failure:
        failed = ChatAttempt.objects.filter(pk=attempt.pk, status=ChatAttempt.Status.PENDING).update(
            status=ChatAttempt.Status.FAILED,
            failure=failure.kind,
            message=failure.message[:500],
            seconds=time.monotonic() - started,
            finished_at=timezone.now(),
        )
        return chat_state(chat, known=(turns, failure.kind)) if failed else chat_state(chat)
    index = attempt.user_turn + 1
    with transaction.atomic():
        # Stored only while the attempt is still the pending one: a reply come after the attempt was
        # declared lost is dropped (its turn was retried or is to be), so no turn is stored twice.
        # While it was pending nothing else could add a turn (sending and retrying wait for it), so
        # its index is free; were it ever taken, the stored turn is kept (the index is unique).
        won = ChatAttempt.objects.filter(pk=attempt.pk, status=ChatAttempt.Status.PENDING).update(
            status=ChatAttempt.Status.OK, seconds=time.monotonic() - started, finished_at=timezone.now()
        )
        if won:
            turn = ConversationTurn(
                conversation_id=chat.conversation_id, index=index, speaker=SYSTEM_SPEAKER, text=reply.text
            )
            ConversationTurn.objects.bulk_create([turn], ignore_conflicts=True)
    if not won:
        return chat_state(chat)
    return chat_state(chat, known=([*turns, (index, SYSTEM_SPEAKER, reply.text)], ""))


def _locked(chat):
    """The chat's row locked for this transaction and read afresh with its assignment (whose status
    an action checks). The HIT, survey, settings and chat system are the ones `chat` holds: no
    action changes them, and reading them again under the lock cost every message a wide join."""
    fresh = LiveChat.objects.select_for_update(of=("self",)).select_related("assignment").get(pk=chat.pk)
    fresh.assignment.hit = chat.assignment.hit
    fresh.chat_system = chat.chat_system
    return fresh


def _check_open(chat):
    if chat.ended_at is not None:
        raise ChatRefused("This conversation has ended: answer the final questions below.")
    if chat.assignment.status != Assignment.Status.ACTIVE:
        raise ChatRefused("This task is no longer open.", status=410)


def _next_attempt(chat, user_turn):
    return (ChatAttempt.objects.filter(live_chat=chat, user_turn=user_turn).aggregate(m=Max("number"))["m"] or 0) + 1


def message_text(text):
    text = str(text or "").replace("\r\n", "\n").strip()
    if not text:
        raise ChatRefused("Write a message first.", status=400)
    if "\x00" in text:
        raise ChatRefused("The message holds a NUL character, which cannot be stored: remove it.", status=400)
    if len(text) > MAX_MESSAGE_CHARS:
        raise ChatRefused(
            f"The message has {len(text)} characters: a message may have at most {MAX_MESSAGE_CHARS}.", status=400
        )
    return text


# Beyond these the page's measures are not believed (a day of idling, a paste of a whole book).
MAX_IDLE_MS = 86_400_000
MAX_PASTED_CHARS = 1_000_000


def _measure(value, name, ceiling):
    try:
        number = int(str(value).strip())
    except ValueError:
        shown = str(value)[:20]
        raise ChatRefused(f"The message's {name} must be a whole number, not {shown!r}.", status=400) from None
    if number < 0:
        raise ChatRefused(f"The message's {name} must be 0 or more.", status=400)
    return min(number, ceiling)


def message_telemetry(*, pasted_chars, idle_ms):
    """How the page measured the message's writing (the effort rule's evidence), or None when it sent
    none (an older page, a script-less client): such a message is not judged on paste or idle time."""
    if pasted_chars in (None, "") and idle_ms in (None, ""):
        return None
    return {
        "pasted_chars": _measure(pasted_chars or 0, "pasted characters", MAX_PASTED_CHARS),
        "idle_ms": _measure(idle_ms or 0, "idle time", MAX_IDLE_MS),
    }


def _seen_and_pending(chat, client_key):
    """In one read: whether the message key was stored already, and the chat's pending attempt."""
    rows = ChatAttempt.objects.filter(live_chat=chat).filter(
        Q(client_key=client_key) | Q(status=ChatAttempt.Status.PENDING)
    )
    rows = list(rows)
    seen = any(row.client_key == client_key for row in rows)
    return seen, _alive(chat, next((row for row in rows if row.status == ChatAttempt.Status.PENDING), None))


def chat_send(chat, *, text, client_key, telemetry=None):
    """Store the annotator's message (with how the page measured its writing, `message_telemetry`)
    and ask the system; the chat's state after it. A message whose key was seen is not stored again
    (a double click, a retried request, a second tab replaying it): the state is returned."""
    text = message_text(text)
    client_key = str(client_key or "").strip()[:64]
    if not client_key:
        raise ChatRefused("The message came without its key: reload the page.", status=400)
    try:
        with transaction.atomic():
            chat = _locked(chat)
            seen, pending = _seen_and_pending(chat, client_key)
            if seen:
                return chat_state(chat)  # already stored: nothing more to do
            _check_open(chat)
            if pending is not None:
                raise ChatRefused("Wait for the reply to your last message before you send another.")
            turns = _turns(chat)
            if _unanswered_turn(chat, turns) is not None:
                raise ChatRefused("Your last message has no reply yet: press “Try again” first.")
            settings = chat.assignment.hit.survey.chat_settings
            if user_turn_count(turns) >= settings.max_turns:
                raise ChatRefused(f"This conversation has reached its {settings.max_turns} messages: end it below.")
            index = turns[-1][0] + 1 if turns else 0
            ConversationTurn.objects.create(
                conversation_id=chat.conversation_id, index=index, speaker=USER_SPEAKER, text=text
            )
            # A new turn has had no attempt: this is its first. The database's constraints (one in
            # flight, a key once) still hold the rule if anything slipped past the lock.
            attempt = ChatAttempt.objects.create(
                live_chat=chat, user_turn=index, number=1, client_key=client_key, telemetry=telemetry or {}
            )
    except IntegrityError:
        raise ChatRefused("A reply is already on its way: wait for it.") from None
    return _ask(chat, attempt, [*turns, (index, USER_SPEAKER, text)])


def chat_retry(chat):
    """Ask the system again for the reply to the annotator's unanswered turn (or the opening); the
    chat's state after it."""
    try:
        with transaction.atomic():
            chat = _locked(chat)
            _check_open(chat)
            if _pending(chat) is not None:
                raise ChatRefused("A reply is already on its way: wait for it.")
            turns = _turns(chat)
            turn = _unanswered_turn(chat, turns)
            if turn is None:
                return chat_state(chat)  # answered meanwhile (another tab): nothing to ask
            number = _next_attempt(chat, turn)
            attempt = ChatAttempt.objects.create(live_chat=chat, user_turn=turn, number=number, retry=number > 1)
    except IntegrityError:
        raise ChatRefused("A reply is already on its way: wait for it.") from None
    return _ask(chat, attempt, turns)


def chat_end(chat):
    """End the conversation (after the minimum of annotator messages): the final questions follow."""
    with transaction.atomic():
        chat = _locked(chat)
        if chat.ended_at is not None:
            return chat
        _check_open(chat)
        state = chat_state(chat)
        if state["pending"] or state["unanswered"]:
            raise ChatRefused("Wait for the reply (or try that message again) before you end the conversation.")
        unrated = _unrated_replies(chat, state["turns"])
        if unrated:
            raise ChatRefused(
                f"Rate every reply of the chatbot (under each) before you end the conversation: "
                f"{len(unrated)} still unrated."
            )
        if state["user_turns"] < state["min_turns"]:
            raise ChatRefused(
                f"Write at least {state['min_turns']} messages before you end the conversation "
                f"({state['user_turns']} so far)."
            )
        chat.ended_at = timezone.now()
        chat.save(update_fields=["ended_at", "updated_at"])
    return chat


def _turn_scales(survey):
    _, scales, _ = split_aspects(list(survey.aspects.all()))
    return scales


def _unrated_replies(chat, turns):
    """The system's turns (indexes) still missing a per-turn rating the survey asks for."""
    keys = {a.key for a in _turn_scales(chat.assignment.hit.survey)}
    if not keys:
        return []
    return [t["index"] for t in turns if t["bot"] and not keys <= set(chat.turn_scores.get(str(t["index"]), {}))]


def _own_reply(chat, turn):
    if not ConversationTurn.objects.filter(
        conversation_id=chat.conversation_id, index=turn, speaker=SYSTEM_SPEAKER
    ).exists():
        raise ChatRefused("No such reply in this conversation.", status=400)


def chat_rate(chat, *, turn, key, score):
    """Rate the system's turn `turn` on per-turn scale `key` (`score` empty: take the rating back);
    kept at once. Refused once the conversation has ended (its ratings are then final)."""
    scale = next((a for a in _turn_scales(chat.assignment.hit.survey) if a.key == key), None)
    if scale is None:
        raise ChatRefused("No such question.", status=400)
    value = None
    if str(score).strip():
        try:
            value = int(str(score).strip())
        except ValueError:
            raise ChatRefused(f"{str(score)[:20]!r} is not an answer to “{scale.question}”.", status=400) from None
        if not scale.scale_min <= value <= scale.scale_max:
            raise ChatRefused(f"{value} is outside the scale {scale.scale_min}-{scale.scale_max}.", status=400)
    with transaction.atomic():
        chat = _locked(chat)
        _check_open(chat)
        _own_reply(chat, turn)
        given = dict(chat.turn_scores.get(str(turn), {}))
        if value is None:
            given.pop(key, None)
        else:
            given[key] = value
        scores = {**chat.turn_scores, str(turn): given}
        chat.turn_scores = {t: keys for t, keys in scores.items() if keys}
        chat.save(update_fields=["turn_scores", "updated_at"])
    return chat


def chat_flag(chat, *, turn, key, on):
    """Tick (`on`) or untick flag `key` under the system's turn `turn`; kept at once."""
    survey = chat.assignment.hit.survey
    _, _, flags = split_aspects(list(survey.aspects.all()))
    if key not in {a.key for a in flags}:
        raise ChatRefused("No such question.", status=400)
    with transaction.atomic():
        chat = _locked(chat)
        if chat.assignment.status != Assignment.Status.ACTIVE:
            raise ChatRefused("This task is no longer open.", status=410)
        if not ConversationTurn.objects.filter(
            conversation_id=chat.conversation_id, index=turn, speaker=SYSTEM_SPEAKER
        ).exists():
            raise ChatRefused("No such reply in this conversation.", status=400)
        ticked = set(chat.flags.get(str(turn), []))
        ticked = ticked | {key} if on else ticked - {key}
        flags = {**chat.flags, str(turn): sorted(ticked)}
        chat.flags = {t: keys for t, keys in flags.items() if keys}
        chat.save(update_fields=["flags", "updated_at"])
    return chat
