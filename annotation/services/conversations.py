"""Import a dataset of conversations: all conversations and turns, or none.

As dataset_import (annotation/services/imports.py): the file is parsed and checked completely before
the first write, every problem is listed, and the writes run in one transaction. Turns go in as
multi-row INSERTs (services/bulk.py): 6,500 conversations of 25 turns import in a few seconds.
"""

from django.db import DatabaseError, transaction

from annotation.importing import DataImportError, ErrorCollector, detect_format, read_lines
from annotation.importing.conversations import parse_conversations
from annotation.models import Conversation, ConversationTurn, Dataset, System
from annotation.services.bulk import insert_rows, refresh_statistics
from annotation.services.imports import BATCH_SIZE, NAME_LENGTH

HOLDS_CONVERSATIONS = "conversations"  # Dataset.meta["holds"] of a dataset made from a conversations file


def conversations_import(*, file, name, owner=None, fmt=None, description="", max_bytes=None):
    """Create dataset `name` from a conversations file (a path, bytes or file object). Returns the Dataset."""
    name = (name or "").strip()
    if not name:
        raise DataImportError("the dataset needs a name")
    if len(name) > NAME_LENGTH:
        raise DataImportError(f"the dataset name is longer than {NAME_LENGTH} characters")
    fmt = detect_format(fmt, file)
    errors = ErrorCollector()
    conversations = parse_conversations(read_lines(file, max_bytes=max_bytes), fmt, errors)
    errors.raise_if_any()
    if Dataset.objects.filter(name=name, owner=owner).exists():  # names are unique per owner
        raise DataImportError(f"a dataset named {name!r} already exists; choose another name")
    try:
        with transaction.atomic():
            dataset = Dataset.objects.create(
                name=name,
                owner=owner,
                description=description,
                meta={"source_format": fmt, "holds": HOLDS_CONVERSATIONS},
            )
            _write_conversations(dataset, conversations)
    except DatabaseError as exc:
        # Only a concurrent import of the same name should get here; everything else was checked above.
        raise DataImportError(f"the dataset could not be saved: {exc}") from None
    refresh_statistics(Conversation, ConversationTurn)
    return dataset


def _write_conversations(dataset, conversations):
    names = list(dict.fromkeys(c.system for c in conversations))
    System.objects.bulk_create([System(dataset=dataset, name=n) for n in names], batch_size=BATCH_SIZE)
    systems = dict(System.objects.filter(dataset=dataset).values_list("name", "pk"))
    Conversation.objects.bulk_create(
        (
            Conversation(
                dataset=dataset,
                external_id=c.external_id,
                position=i,
                system_id=systems[c.system],
                seed=c.seed,
                meta=c.meta,
                source=Conversation.Source.IMPORTED,
            )
            for i, c in enumerate(conversations)
        ),
        batch_size=BATCH_SIZE,
    )
    # Read the ids back rather than rely on bulk_create returning them (not every backend does).
    pks = dict(Conversation.objects.filter(dataset=dataset).values_list("external_id", "pk"))
    insert_rows(
        ConversationTurn,
        ("conversation", "index", "speaker", "text"),
        [
            (pks[c.external_id], index, speaker, text)
            for c in conversations
            for index, (speaker, text) in enumerate(c.turns)
        ],
    )
