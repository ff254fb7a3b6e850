"""Write import-format records to files the way a researcher would, for command-level tests."""

import csv
import io
import json


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def dataset_csv(records):
    """The documented CSV form of dataset records: one row per turn, reference and response."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["context_id", "kind", "speaker", "system", "text", "meta"])
    for record in records:
        meta = {k: v for k, v in record.items() if k not in ("context_id", "context", "references", "responses")}
        for i, turn in enumerate(record["context"]):
            speaker, text = (turn.get("speaker") or "", turn["text"]) if isinstance(turn, dict) else ("", turn)
            writer.writerow(
                [record["context_id"], "context", speaker, "", text, json.dumps(meta) if meta and i == 0 else ""]
            )
        for reference in record.get("references", []):
            writer.writerow([record["context_id"], "reference", "", "", reference, ""])
        for response in record["responses"]:
            extra = {k: v for k, v in response.items() if k not in ("system", "text")}
            writer.writerow(
                [
                    record["context_id"],
                    "response",
                    "",
                    response["system"],
                    response["text"],
                    json.dumps(extra) if extra else "",
                ]
            )
    return out.getvalue()


def ratings_csv(records):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["context_id", "system", "worker", "score", "aspect"])
    for r in records:
        writer.writerow([r["context_id"], r["system"], r["worker"], r["score"], r.get("aspect", "overall")])
    return out.getvalue()


SMALL_DATASET = [
    {
        "context_id": "c1",
        "context": [{"speaker": "A", "text": "Hi, how are you?"}, {"speaker": "B", "text": "Fine, and you?"}],
        "references": ["Great, thanks!", "Not bad at all."],
        "responses": [
            {"system": "hred", "text": "I don't know.", "temperature": 0.7},
            {"system": "human", "text": "Doing well, thanks for asking."},
        ],
        "topic": "greeting",
        "source": {"corpus": "made-up", "split": "test"},
    },
    {
        "context_id": "c2",
        "context": ["Where should we eat tonight?"],
        "references": [],
        "responses": [{"system": "hred", "text": "Yes."}, {"system": "human", "text": "How about the Thai place?"}],
    },
]

SMALL_RATINGS = [
    {"context_id": "c1", "system": "hred", "worker": "w1", "score": 2},
    {"context_id": "c1", "system": "hred", "worker": "w1", "score": 1, "aspect": "topicality"},
    {"context_id": "c1", "system": "human", "worker": "w1", "score": 5},
    {"context_id": "c2", "system": "hred", "worker": "w2", "score": 1},
    {"context_id": "c2", "system": "human", "worker": "w2", "score": 4},
]
