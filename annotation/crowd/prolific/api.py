"""The HTTP client for Prolific's public API (the only code that sends requests to Prolific).

The token is read from the environment (`PROLIFIC_API_TOKEN`) when a client is made and lives only
in the client's headers: it is never stored, logged, or put in an error message.
"""

import os
import time

from django.conf import settings

from annotation.crowd.base import ProviderError
from annotation.services.runtime.lazy_import import lazy_module

# httpx (about 0.1 s) loads when Prolific is first called, not when the apps load.
httpx = lazy_module("httpx")

DEFAULT_API_URL = "https://api.prolific.com/api/v1/"
MAX_RETRY_AFTER_SECONDS = 60


class PaymentOutcomeUnknown(ProviderError):
    """A non-idempotent call was sent but no answer came back: it may or may not have happened."""


def _error_detail(response):
    """Prolific's own words about a refusal (its JSON `error.detail`), without echoing headers."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("title") or error
        return str(detail)[:500]
    return str(error)[:500]


def _retry_after(response):
    try:
        return min(float(response.headers.get("Retry-After", "1")), MAX_RETRY_AFTER_SECONDS)
    except ValueError:
        return 1.0


class ProlificClient:
    """Thin wrapper: one method per documented call, errors turned into `ProviderError`s.

    A 429 is retried after its Retry-After (the request was not carried out, so this is safe even
    for the pay call); a timeout is retried only for calls that are safe to repeat.
    """

    def __init__(self, *, token=None, base_url=None, timeout=20.0, attempts=3, sleep=time.sleep, transport=None):
        token = token if token is not None else os.environ.get("PROLIFIC_API_TOKEN", "")
        if not token:
            raise ProviderError("PROLIFIC_API_TOKEN is not set: Prolific cannot be reached without an API token.")
        base_url = base_url or getattr(settings, "PROLIFIC_API_URL", "") or DEFAULT_API_URL
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )
        self._attempts = attempts
        self._sleep = sleep

    def _call(self, method, path, *, json=None, params=None, repeatable=True):
        for attempt in range(1, self._attempts + 1):
            try:
                response = self._http.request(method, path, json=json, params=params)
            except httpx.TimeoutException:
                if not repeatable:
                    raise PaymentOutcomeUnknown(
                        f"Prolific did not answer {method} {path} in time; it may have been carried out."
                    ) from None
                if attempt == self._attempts:
                    raise ProviderError(f"Prolific did not answer {method} {path} in time.") from None
                continue
            except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.LocalProtocolError) as error:
                # Failed before the request left this machine: Prolific never saw it.
                raise ProviderError(f"Cannot reach Prolific ({type(error).__name__}).") from None
            except httpx.HTTPError as error:
                # The connection broke after the request may have reached Prolific (a reset, a
                # truncated answer): for a call that must not be repeated, its outcome is unknown.
                if not repeatable:
                    raise PaymentOutcomeUnknown(
                        f"Prolific's answer to {method} {path} was lost ({type(error).__name__}); "
                        "it may have been carried out."
                    ) from None
                raise ProviderError(f"Cannot reach Prolific ({type(error).__name__}).") from None
            if response.status_code == 429 and attempt < self._attempts:
                self._sleep(_retry_after(response))
                continue
            if response.status_code >= 500 and not repeatable:
                # A 5xx (a gateway timing out, a crash after the work) says nothing about whether
                # Prolific carried the request out: treating it as a refusal would send it again.
                raise PaymentOutcomeUnknown(
                    f"Prolific answered {method} {path} with a server error ({response.status_code}); "
                    "it may have been carried out."
                )
            return self._answer(method, path, response)
        raise ProviderError(f"Prolific kept refusing {method} {path} as too many requests (429).")

    def _answer(self, method, path, response):
        status = response.status_code
        if status == 401:
            raise ProviderError("Prolific refused the API token (401): check PROLIFIC_API_TOKEN.")
        if status == 429:
            raise ProviderError(f"Prolific refused {method} {path} as too many requests (429); try again later.")
        if status >= 400:
            raise ProviderError(f"Prolific refused {method} {path} ({status}): {_error_detail(response)}")
        if status == 204 or not response.content:
            return {}
        return response.json()

    # --- documented calls -------------------------------------------------------------------
    def me(self):
        return self._call("GET", "users/me/")

    def create_study(self, body):
        # Not repeatable: a repeat would make a second draft; publishing saves the id at once.
        return self._call("POST", "studies/", json=body, repeatable=False)

    def studies(self, *, states=()):
        """Every study of the account, or only those in `states` (e.g. ("UNPUBLISHED",): drafts).

        Documented (https://docs.prolific.com/api-reference/studies/get-studies): `GET studies/`
        answers {"results": [{"id", "name", "internal_name", "status", ...}]}; its `state`
        parameter filters by status, written "(ACTIVE|PAUSED|...)". Whether the list without it
        holds drafts is not documented, so a caller looking for drafts names them."""
        params = {"state": f"({'|'.join(states)})"} if states else None
        return self._every_page("studies/", params=params)

    def get_study(self, study_id):
        return self._call("GET", f"studies/{study_id}/")

    def transition_study(self, study_id, action):
        return self._call("POST", f"studies/{study_id}/transition/", json={"action": action})

    def set_places(self, study_id, places):
        return self._call("PATCH", f"studies/{study_id}/", json={"total_available_places": places})

    def cost(self, *, reward_cents, places):
        # Documented (https://docs.prolific.com/api-reference/studies/calculate-study-cost): the
        # request is {"reward": cents, "total_available_places": n}; the answer is
        # {"total_cost": <double>}, in cents of the account's currency, VAT and fees included.
        return self._call(
            "POST", "study-cost-calculator/", json={"reward": reward_cents, "total_available_places": places}
        )

    def _every_page(self, path, params=None):
        """The `results` of a list call and of every page after it (Prolific's `_links.next`)."""
        results, page = [], self._call("GET", path, params=params)
        read = {self._http.base_url.join(path)}
        while True:
            results.extend(page.get("results") or [])
            following = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not following:
                return results
            page = self._call("GET", self._next_page(following, read))

    def _next_page(self, following, read):
        """The next page's URL, only on the API RateLab is configured with (every request carries
        the token: a link to another host, or to plain http, would hand it over) and never a page
        already read.

        A link naming the API's path under another origin (another of Prolific's host names, or
        http behind its proxy) is read from the configured origin instead: the pages are the same,
        the token goes nowhere else, and the list is not cut short. A path outside the API is not
        followed."""
        base, url = self._http.base_url, self._http.base_url.join(following)
        if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
            if not url.path.startswith(base.path):
                raise ProviderError(f"Prolific's next page {str(url)[:200]!r} is not on Prolific's API; not followed.")
            url = base.copy_with(path=url.path, query=url.query or None)
        if url in read:
            raise ProviderError(f"Prolific's next page {str(url)[:200]!r} was already read; the list stops there.")
        read.add(url)
        return str(url)

    def submissions(self, study_id):
        """Every submission of the study, following Prolific's pagination links."""
        return self._every_page(f"studies/{study_id}/submissions/")

    def submission(self, submission_id):
        return self._call("GET", f"submissions/{submission_id}/")

    def transition_submission(self, submission_id, body):
        return self._call("POST", f"submissions/{submission_id}/transition/", json=body)

    def create_bonus(self, *, study_id, participant_id, amount_cents):
        # Prolific takes the amount in the study's currency units, as "<participant id>,<amount>".
        csv = f"{participant_id},{amount_cents / 100:.2f}\n"
        return self._call(
            "POST", "submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv}, repeatable=False
        )

    def pay_bonus(self, bulk_id):
        # Not idempotent on Prolific's side: a repeat pays twice, so a timeout is never retried.
        return self._call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", repeatable=False)

    def workspace_balance(self, workspace_id):
        """The workspace's funds and the currency it pays in.

        Documented (https://docs.prolific.com/api-reference/workspaces/get-workspace-balance):
        `GET workspaces/{workspace_id}/balance/` answers {"currency_code", "total_balance",
        "available_balance", ...}, amounts in the currency's minor unit (pence, cents)."""
        return self._call("GET", f"workspaces/{workspace_id}/balance/")

    # --- participant groups (https://docs.prolific.com/api-reference/participant-groups) ------
    def create_participant_group(self, *, name, workspace_id, description, participant_ids):
        # Documented request: name, workspace_id (or organisation_id), description, participant_ids;
        # answer: the group with its `id`. Not repeated on a timeout: a repeat makes a second group.
        body = {
            "name": name,
            "workspace_id": workspace_id,
            "description": description,
            "participant_ids": list(participant_ids),
        }
        return self._call("POST", "participant-groups/", json=body, repeatable=False)

    def participant_groups(self, workspace_id):
        """The workspace's active participant groups.

        Documented: `GET participant-groups/?filter[workspace_id]=<id>` (and `active`), answering
        {"results": [{"id", "name", "workspace_id", "is_deleted", ...}]}.
        """
        # Every page: a group on a later page missed here would be created a second time.
        groups = self._every_page("participant-groups/", {"filter[workspace_id]": workspace_id, "active": "true"})
        return [group for group in groups if not group.get("is_deleted")]

    def add_to_participant_group(self, group_id, participant_ids):
        # Documented: members already in the group are ignored, so a repeat is harmless.
        return self._call(
            "POST", f"participant-groups/{group_id}/participants/", json={"participant_ids": list(participant_ids)}
        )
