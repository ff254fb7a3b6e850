"""Dialogue corpora for VHRED pre-training: the packaged Chit-Chat dataset or a researcher's file.

`chitchat-dataset` ships dataset.json: {conversation id: {"messages": [[message, ...], ...]}},
where each inner list is one speaker's turn made of consecutive messages ({"text", ...}).
A turn here is those messages joined by spaces.
"""

import json
from pathlib import Path

import chitchat_dataset


class CorpusError(ValueError):
    """The corpus file cannot be read as dialogues."""


def chitchat_dialogues():
    path = Path(chitchat_dataset.__file__).parent / "dataset.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    dialogues = []
    for conversation in data.values():
        turns = [" ".join(m["text"].strip() for m in turn if m.get("text")) for turn in conversation["messages"]]
        turns = [t for t in turns if t]
        if len(turns) >= 2:
            dialogues.append(turns)
    return dialogues


def file_dialogues(path):
    """Dialogues from a file: JSONL (each line a list of turns, or {"turns": [...]}) or plain text
    (one turn per line, a blank line between dialogues)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CorpusError(f"cannot read corpus {path}: {error}") from error
    return text_dialogues(text, name=str(path), jsonl=path.suffix in (".jsonl", ".json"))


def text_dialogues(text, *, name, jsonl):
    """Dialogues from a corpus file's text; `name` is how error messages call the file."""
    dialogues = []
    if jsonl:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as error:
                raise CorpusError(f"{name} line {number}: not JSON ({error})") from error
            turns = item.get("turns") if isinstance(item, dict) else item
            if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
                raise CorpusError(f'{name} line {number}: expected a list of turns or {{"turns": [...]}}')
            dialogues.append([t.strip() for t in turns if t.strip()])
    else:
        for block in text.split("\n\n"):
            dialogues.append([line.strip() for line in block.splitlines() if line.strip()])
    dialogues = [d for d in dialogues if len(d) >= 2]
    if not dialogues:
        raise CorpusError(f"{name} holds no dialogue of two or more turns")
    return dialogues
