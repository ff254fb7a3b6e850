"""What several benches share: waiting for the server they started, and percentiles of their timings."""

import time
import urllib.error
import urllib.request


def wait_for(url, seconds=30):
    """Return once `url` answers at all (any HTTP status); RuntimeError after `seconds` without one."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # an answer, even a 404 or 500: the server is up
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer at {url} within {seconds} s")


def percentile(values, q):
    """The q-th percentile (0-100) by the nearest rank of the sorted values; NaN for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]
