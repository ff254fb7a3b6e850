"""Convert the public human-judgement data in ../shared/data into RateLab's import format.

Each loader returns `(dataset_records, rating_records)`: lists of dicts in exactly the JSONL
shapes that `import_dataset` and `import_ratings` read, so tests exercise the real formats.
"""

import json
from pathlib import Path

USR_GROUND_TRUTH = "Original Ground Truth"
GRADE_SYSTEMS = ("transformer_generator", "transformer_ranker")
GRADE_JUDGEMENT_NAMES = {"dailydialog": "dailydialog_EVAL", "empatheticdialogues": "empatheticdialogues"}


def usr_personachat(shared_data: Path, *, include_ground_truth=True, aspect="Overall"):
    """USR-PersonaChat: 60 contexts x 5 responses; three named annotators per item.

    The ground-truth response is each context's reference; with `include_ground_truth` it is
    also a response (system "Original Ground Truth"), as in the USR release.
    """
    items = json.loads((shared_data / "usr_personachat" / "pc_usr_data.json").read_text(encoding="utf-8"))
    dataset, ratings = [], []
    for index, item in enumerate(items):
        context_id = f"pc{index:02d}"
        turns = [turn.strip() for turn in item["context"].split("\n") if turn.strip()]
        truth = next(r for r in item["responses"] if r["model"] == USR_GROUND_TRUTH)
        responses = [
            {"system": r["model"], "text": r["response"].strip()}
            for r in item["responses"]
            if include_ground_truth or r["model"] != USR_GROUND_TRUTH
        ]
        dataset.append(
            {
                "context_id": context_id,
                "context": turns,
                "references": [truth["response"].strip()],
                "responses": responses,
                "fact": item["fact"],
            }
        )
        for response in item["responses"]:
            if not include_ground_truth and response["model"] == USR_GROUND_TRUTH:
                continue
            for worker, score in zip(item["annotators"], response[aspect], strict=True):
                ratings.append(
                    {"context_id": context_id, "system": response["model"], "worker": worker, "score": score}
                )
    return dataset, ratings


def grade(shared_data: Path, corpus: str):
    """GRADE DailyDialog or EmpatheticDialogues: 150 contexts x 2 systems, 8-11 anonymous ratings each.

    The raters are anonymous and differ across items, so each rating gets a worker id of its own.
    """
    root = shared_data / "grade"
    judgements = json.loads((root / "human_judgement.json").read_text(encoding="utf-8"))
    dataset = {}
    ratings = []
    for system in GRADE_SYSTEMS:
        folder = root / "eval_data" / corpus / system
        contexts = _lines(folder / "human_ctx.txt")
        hypotheses = _lines(folder / "human_hyp.txt")
        references = _lines(folder / "human_ref.txt")
        rows = sorted(
            (j for j in judgements if j["Dataset"] == GRADE_JUDGEMENT_NAMES[corpus] and j["DialogModel"] == system),
            key=lambda j: j["ID"],
        )
        for line, (context, hypothesis, reference, row) in enumerate(
            zip(contexts, hypotheses, references, rows, strict=True)
        ):
            context_id = f"{corpus[:2]}{line:03d}"
            record = dataset.setdefault(
                context_id,
                {
                    "context_id": context_id,
                    "context": [t.strip() for t in context.split("|||")],
                    "references": [reference.strip()],
                    "responses": [],
                },
            )
            record["responses"].append({"system": system, "text": hypothesis.strip()})
            for k, score in enumerate(json.loads(row["HumanScores"])):
                worker = f"{corpus[:2]}-{system[12:15]}-{line:03d}-{k}"
                ratings.append({"context_id": context_id, "system": system, "worker": worker, "score": score})
    return list(dataset.values()), ratings


def _lines(path: Path):
    text = path.read_text(encoding="utf-8")
    return text.rstrip("\n").split("\n")
