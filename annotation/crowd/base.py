"""The interface every crowd provider implements.

A provider moves a survey's HITs to a crowd and brings the crowd's view of the work
back. The app's own tables (HIT, Assignment, Rating) stay the record of what annotators
submitted; a provider only publishes, reconciles and pays. Methods are idempotent: calling
one twice with the same arguments changes nothing the second time.
"""

import abc


class ProviderError(Exception):
    """A provider refused or failed an operation; the message is safe to show a researcher."""


class CrowdProvider(abc.ABC):
    name = ""

    @abc.abstractmethod
    def publish(self, *, survey):
        """Make the survey's HITs available to annotators."""

    @abc.abstractmethod
    def sync(self, *, survey):
        """Bring the provider's view of assignments into the app; returns a summary dict."""

    @abc.abstractmethod
    def approve(self, *, assignment, feedback=""):
        """Accept (and pay for) a submitted assignment."""

    @abc.abstractmethod
    def reject(self, *, assignment, reason):
        """Refuse a submitted assignment, with a reason the annotator sees."""

    @abc.abstractmethod
    def bonus(self, *, assignment, amount_cents, reason):
        """Pay an extra amount for an assignment."""

    @abc.abstractmethod
    def block(self, *, annotator, reason):
        """Keep an annotator from this and later surveys."""

    @abc.abstractmethod
    def expire(self, *, survey):
        """Stop handing out the survey's remaining work."""
