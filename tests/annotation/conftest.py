"""Fixtures shared by the annotation tests."""

import pytest

from tests.annotation.mturk_helpers import install_stub
from tests.annotation.prolific_helpers import api, prolific_env, started  # noqa: F401 (fixtures of the Prolific tests)


@pytest.fixture
def stubber(monkeypatch, settings, db):
    """A real boto3 MTurk client behind botocore's Stubber; every expected call must be made."""
    _, stubber = install_stub(monkeypatch, settings)
    with stubber:
        yield stubber
        stubber.assert_no_pending_responses()
