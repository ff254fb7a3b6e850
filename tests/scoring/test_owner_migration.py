"""Migrations 0005/0006: every ADEM model gets an owner (the dataset's, else the first superuser)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("scoring", "0004_workers_run_heartbeat")]
AFTER = [("scoring", "0006_scoring_adem_owner_required")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_ownerless_models_get_their_datasets_owner_else_the_first_superuser():
    old = _migrate(BEFORE)
    User = old.get_model("auth", "User")
    Dataset = old.get_model("annotation", "Dataset")
    AdemModel = old.get_model("scoring", "AdemModel")
    alice = User.objects.create(username="alice")
    root = User.objects.create(username="root", is_superuser=True)
    User.objects.create(username="zed", is_superuser=True)  # a later superuser: root comes first
    dataset = Dataset.objects.create(name="study", owner=alice)
    AdemModel.objects.create(name="from-dataset", dataset=dataset)
    AdemModel.objects.create(name="orphan")
    AdemModel.objects.create(name="kept", owner=root, dataset=dataset)
    new = _migrate(AFTER)
    owners = dict(new.get_model("scoring", "AdemModel").objects.values_list("name", "owner__username"))
    assert owners == {"from-dataset": "alice", "orphan": "root", "kept": "root"}
    _migrate(_latest())


def _latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()
