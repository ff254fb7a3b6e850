"""Build study data for tests through the real import services.

`load_dataset_records` and `load_rating_records` take records in the import formats (see
tests/shared_loaders.py and the README), write them as JSONL and import them with
`dataset_import` / `ratings_import`, so every test's data passes the same validation as a
researcher's file.
"""

import json

from annotation.services import dataset_import, ratings_import


def records_to_jsonl(records):
    """The JSONL bytes of a list of records, as a researcher's file would hold them."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")


def load_dataset_records(*, records, name, owner=None):
    """Create a dataset from import-format records (dicts). Returns the Dataset."""
    return dataset_import(file=records_to_jsonl(records), name=name, owner=owner, fmt="jsonl")


def load_rating_records(*, records, dataset, survey_name, owner=None, scale_min=1, scale_max=5):
    """Create an imported survey holding import-format rating records. Returns the Survey."""
    return ratings_import(
        file=records_to_jsonl(records),
        dataset=dataset,
        survey_name=survey_name,
        owner=owner,
        fmt="jsonl",
        scale_min=scale_min,
        scale_max=scale_max,
    )
