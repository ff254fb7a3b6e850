"""An annotator driven over HTTP (urllib, its own cookie jar): used by the concurrency test and the benchmark."""

import http.cookiejar
import re
import time
import urllib.error
import urllib.parse
import urllib.request

ACTION_RE = re.compile(r'<form method="post" action="(/a/[^"]+/)"')
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FIELD_RE = re.compile(r'name="(score-\d+-[\w-]+)"')
SECONDS_RE = re.compile(r'name="seconds-(\d+)"')
CHECK_RE = re.compile(
    r'data-item="(\d+)">\s*<p class="candidate"[^>]*><span class="candidate-label">[^<]*</span>'
    r' <span class="text" dir="auto">This is an attention check[^<]*choose (\d)'
)


class LiveAnnotator:
    def __init__(self, base_url, survey_token, worker_id, timeout=60):
        self.base_url = base_url.rstrip("/")
        self.survey_token = survey_token
        self.worker_id = worker_id
        self.timeout = timeout
        # Production cookies are Secure; the benchmark talks plain http to a local gunicorn, so send them anyway.
        policy = http.cookiejar.DefaultCookiePolicy(secure_protocols=("https", "wss", "http"))
        jar = http.cookiejar.CookieJar(policy)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        self.page_times, self.submit_times = [], []
        self.tokens = []  # assignment tokens handed to this annotator
        self.answered = 0  # rating questions answered on submitted HITs, a check block's fillers included
        self.csrf = None  # the CSRF token of the pages seen (the cookie holds its secret)

    def _open(self, url, data=None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        started = time.perf_counter()
        try:
            with self.opener.open(url, data=body, timeout=self.timeout) as response:
                return response.geturl(), response.status, response.read().decode(), time.perf_counter() - started
        except urllib.error.HTTPError as error:
            return error.geturl(), error.code, error.read().decode(), time.perf_counter() - started

    def do_hit(self, replay=False, score=3, think=0.0):
        """Take a task, answer it, submit it (twice with `replay`). False when no work is left.

        The first time, the survey link's start page (a GET that claims nothing) gives the CSRF
        token; then Start (a POST, as "Do another task" on the thank-you page) claims a task and
        redirects to its page. `page_times` holds the POST and the redirected GET together.
        """
        link = f"{self.base_url}/s/{self.survey_token}/"
        if self.csrf is None:
            _url, status, html, _seconds = self._open(link)
            if status != 200:
                raise RuntimeError(f"{self.worker_id}: start page answered {status}")
            self.csrf = CSRF_RE.search(html).group(1)
        start = {"action": "start", "worker": self.worker_id, "csrfmiddlewaretoken": self.csrf}
        _url, status, html, seconds = self._open(link, start)
        self.page_times.append(seconds)
        if status == 429:
            raise RuntimeError(f"{self.worker_id}: refused by the per-address cap on new annotators")
        action = ACTION_RE.search(html)
        if action is None:
            return False
        if status != 200:
            raise RuntimeError(f"{self.worker_id}: HIT page answered {status}")
        url = self.base_url + action.group(1)
        token = url.rstrip("/").rsplit("/", 1)[-1]
        self.tokens.append(token)
        checks = dict(CHECK_RE.findall(html))
        data = {"csrfmiddlewaretoken": CSRF_RE.search(html).group(1)}
        fields = sorted(set(FIELD_RE.findall(html)))
        # A pairwise task asks A / B / tie (its checks look like any pair: the caller counts
        # judgements in the database rather than from `answered`).
        answer = "a" if "pair-choice" in html else str(score)
        for name in fields:
            item = name.split("-")[1]
            data[name] = checks.get(item, answer)
        for item in SECONDS_RE.findall(html):
            data[f"seconds-{item}"] = "3.0"
        if think:
            time.sleep(think)  # the annotator reading and rating (not part of any measured request)
        for _ in range(2 if replay else 1):
            done_url, status, _body, seconds = self._open(url, data)
            self.submit_times.append(seconds)
            if not done_url.endswith("/done/"):
                raise RuntimeError(f"{self.worker_id}: submit answered {status} at {done_url}")
        self.answered += len(fields) - len(checks)
        return True
