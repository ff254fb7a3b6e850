"""Load the generated demo study and a researcher login that owns it; safe to run again."""

import json
import os

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Dataset
from annotation.services.demo_data import demo_records
from annotation.services.imports import dataset_import

DEMO_DATASET = "demo"
DEMO_USERNAME = "demo"
# For a local demo only; anything reachable by others sets DEMO_PASSWORD (load_demo warns).
DEMO_DEV_PASSWORD = "demo-password"


def demo_password():
    """DEMO_PASSWORD from the environment, else the documented local-demo password."""
    return os.environ.get("DEMO_PASSWORD", "") or DEMO_DEV_PASSWORD


@transaction.atomic
def demo_load(*, seed=0, n_contexts=60):
    """The demo dataset and its owner, created when missing: `(dataset, user, password, created)`.

    An existing demo user gets the demo password again, so the printed login always works.
    """
    password = demo_password()
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
    if not user.check_password(password):
        user.set_password(password)
        user.save(update_fields=["password"])
    dataset = Dataset.objects.filter(name=DEMO_DATASET, owner=user).first()  # names are unique per owner
    if dataset is not None:
        return dataset, user, password, False
    records = demo_records(seed=seed, n_contexts=n_contexts)
    content = "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")
    dataset = dataset_import(
        file=content,
        name=DEMO_DATASET,
        owner=user,
        fmt="jsonl",
        description=(
            "A generated demo study: everyday two-person conversations; systems hred (generic), lstm "
            "(partially on-topic), retrieval (fluent, often off-topic), vhred (decent) and human."
        ),
    )
    return dataset, user, password, True
