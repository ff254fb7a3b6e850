"""The interface every crowd provider implements.

A provider moves a survey's HITs to a crowd and brings the crowd's view of the work
back. The app's own tables (HIT, Assignment, Rating) stay the record of what annotators
submitted; a provider only publishes, reconciles and pays. Methods are idempotent: calling
one twice with the same arguments changes nothing the second time.
"""

import abc
import math
import re
import secrets


class ProviderError(Exception):
    """A provider refused or failed an operation; the message is safe to show a researcher."""


# An amount of money typed for one person (a reward, a bonus), in dollars or pounds: its cents must
# fit the integer columns (PostgreSQL's integer stops at 2**31 - 1, about 21 million dollars).
MAX_AMOUNT = 10_000


def typed_number(text, *, what, most=1e9):
    """A finite number typed on a researcher's page (an amount, hours) of at most `most` either side
    of 0; ProviderError naming `what` otherwise. float() alone takes "inf" and "nan", which then
    fail deep inside (or as a 500), and a finite number too large for the column fails on saving."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise ProviderError(f"{what} must be a number such as 2.50, not {str(text)[:40]!r}.")
    if abs(value) > most:
        raise ProviderError(f"{what} must be at most {most:g}, not {str(text)[:40]!r}.")
    return value


# A bonus form carries a key made when its page was rendered: the same form sent again (a double
# click, a retry, an edited reason) names the same bonus; a freshly loaded page names a new one.
BONUS_KEY_RE = re.compile(r"[A-Za-z0-9_-]{8,40}")


def new_bonus_key():
    return secrets.token_urlsafe(12)


def posted_bonus_key(post):
    """The page key a bonus form sent back; ProviderError when it is missing or not one we make."""
    key = post.get("bonus_key", "")
    # fullmatch: `$` would also let "key\n" through, a second key naming the same form's bonus.
    if not BONUS_KEY_RE.fullmatch(key):
        # Without it a retry could not be told from a new bonus.
        raise ProviderError("This bonus form has no page key: reload the page and pay from it; nothing was paid.")
    return key


class CrowdProvider(abc.ABC):
    name = ""

    def prepare(self, *, survey):
        """Create on the platform what publishing will need, and record it at once.

        Called by the launch outside its own transaction, so what is recorded here survives a
        launch that fails later (Prolific: the draft study's id, so that a retry publishes the
        same draft instead of creating a second one). Default: nothing to prepare.
        """
        return None

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
    def block(self, *, annotator, reason, owner=None):
        """Keep an annotator from this and later surveys of `owner` (None: of everyone)."""

    @abc.abstractmethod
    def expire(self, *, survey):
        """Stop handing out the survey's remaining work."""

    def pause(self, *, survey):
        """Stop the platform recruiting while the survey is paused. Default: nothing to do, as the
        app checks the survey's status on every claim (the built-in link, link platforms, MTurk)."""
        return {}

    def resume(self, *, survey):
        """Let the platform recruit again when a paused survey is launched again. Default: nothing."""
        return {}

    # Whether `add_assignments` works for this provider (the survey page says so when it does not).
    can_add_assignments = False
    # A count of assignments per HIT that an extension cannot cross (MTurk: 10), or None.
    assignment_ceiling = None

    def extension_cost(self, *, survey, per_hit, n_hits):
        """What `per_hit` more assignments on each of `n_hits` HITs cost the researcher, for the page
        that confirms an extension: `{"total": words or "", "lines": [sentences]}`. Nothing is sent or
        charged here."""
        return {"total": "", "lines": []}

    def add_assignments(self, *, survey, per_hit):
        """Tell the crowd that every HIT now takes `per_hit` more assignments (the app's slots are
        already added by `annotation.services.survey_extend`). Providers that cannot, refuse."""
        raise ProviderError(f"The {self.name or 'survey'} provider cannot add work to a study from RateLab.")
