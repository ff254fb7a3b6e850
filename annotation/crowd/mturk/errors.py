"""Errors of the MTurk provider (no boto3 here: the provider translates botocore's errors)."""

from annotation.crowd.base import ProviderError


class MTurkTransientError(ProviderError):
    """Throttling or a temporary service fault: the Celery tasks retry these with backoff."""


class MTurkRequestError(ProviderError):
    """MTurk refused a request; `code` is its error code."""

    def __init__(self, message, *, code=""):
        super().__init__(message)
        self.code = code
