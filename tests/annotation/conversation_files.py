"""Conversation files for the conversation tests, written as a researcher would write them."""

import csv
import io
import json


def conversation(conversation_id, system, texts, *, seed=None, first="user", **meta):
    """A JSONL record whose turns alternate between `first` and the other speaker (user/system)."""
    other = {"user": "system", "system": "user"}
    speaker, turns = first, []
    for text in texts:
        turns.append({"speaker": speaker, "text": text})
        speaker = other[speaker]
    record = {"conversation_id": conversation_id, "system": system, "turns": turns}
    if seed is not None:
        record["seed"] = seed
    record.update(meta)
    return record


def jsonl(records):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def conversations_csv(records):
    """The documented CSV form: one row a turn, system and seed on every row, meta on the first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["conversation_id", "system", "seed", "speaker", "text", "meta"])
    for record in records:
        meta = {k: v for k, v in record.items() if k not in ("conversation_id", "system", "seed", "turns")}
        for i, turn in enumerate(record["turns"]):
            writer.writerow(
                [
                    record["conversation_id"],
                    record["system"],
                    record.get("seed", ""),
                    turn["speaker"],
                    turn["text"],
                    json.dumps(meta) if meta and i == 0 else "",
                ]
            )
    return out.getvalue().encode("utf-8")


def small_study():
    """Three conversations of two systems; d1 and d3 share a seed."""
    return [
        conversation(
            "d1", "meena", ["Hi!", "Hello! Do you like cats?", "Yes.", "Me too."], seed="topic-7", topic="pets"
        ),
        conversation("d2", "blender", ["Hey", "Hi there.", "What's up?", "Not much, and you?"]),
        conversation("d3", "blender", ["Hello", "Hello! How are you?"], seed="topic-7"),
    ]
