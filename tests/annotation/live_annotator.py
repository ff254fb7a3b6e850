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
# A radio's offered value (a conversation page's scales run 0-1, 1-3, 1-5: answer with one offered);
# a checkbox (a conversation's per-turn flag) is left unticked, which means "no".
VALUE_RE = re.compile(r'type="radio" name="(score-\d+-[\w-]+)" value="([^"]+)"')
CHECKBOX_RE = re.compile(r'type="checkbox" name="(score-\d+-[\w-]+)"')
SECONDS_RE = re.compile(r'name="seconds-(\d+)"')
CHECK_RE = re.compile(
    r'data-item="(\d+)">\s*<p class="candidate"[^>]*><span class="candidate-label">[^<]*</span>'
    r' <span class="text" dir="auto">This is an attention check[^<]*choose (\d)'
)


class LiveAnnotator:
    """`flow="classic"`: Start, task page, submit, thank-you page for every task (4 requests).
    `flow="next"`: "Submit and next task" (`then=next`), whose answer is the next task's page: after
    the first Start, one request a task."""

    def __init__(self, base_url, survey_token, worker_id, timeout=60, flow="classic", *, address=None):
        self.base_url = base_url.rstrip("/")
        self.survey_token = survey_token
        self.worker_id = worker_id
        self.timeout = timeout
        self.flow = flow
        # Production cookies are Secure; the benchmark talks plain http to a local gunicorn, so send them anyway.
        policy = http.cookiejar.DefaultCookiePolicy(secure_protocols=("https", "wss", "http"))
        jar = http.cookiejar.CookieJar(policy)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        if address:
            # As a proxy in front of the server would say where the request came from: the server
            # reads it with TRUSTED_PROXY_COUNT=1 (the benchmark's annotators, each from their own address).
            self.opener.addheaders.append(("X-Forwarded-For", address))
        self.page_times, self.submit_times = [], []
        self.tokens = []  # assignment tokens handed to this annotator
        self.answered = 0  # rating questions answered on submitted HITs, a check block's fillers included
        self.csrf = None  # the CSRF token of the pages seen (the cookie holds its secret)
        self.next_page = None  # flow "next": the task page the last submission answered with
        self.finished = False  # flow "next": a submission led to the thank-you page (no task left)

    def _open(self, url, data=None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        started = time.perf_counter()
        try:
            with self.opener.open(url, data=body, timeout=self.timeout) as response:
                return response.geturl(), response.status, response.read().decode(), time.perf_counter() - started
        except urllib.error.HTTPError as error:
            return error.geturl(), error.code, error.read().decode(), time.perf_counter() - started

    def _start(self):
        """The task page Start leads to (status, html), or None when there is no task.

        The first time, the survey link's start page (a GET that claims nothing) gives the CSRF
        token; then Start (a POST, as "Do another task" on the thank-you page) claims a task and
        answers with its page (urllib would follow a redirect: `page_times` holds the whole).
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
        return status, html

    def _answers(self, html, score):
        """(submit URL, form data, fields answered, checks) for the task page `html`."""
        url = self.base_url + ACTION_RE.search(html).group(1)
        checks = dict(CHECK_RE.findall(html))
        data = {"csrfmiddlewaretoken": CSRF_RE.search(html).group(1)}
        fields = sorted(set(FIELD_RE.findall(html)))
        # A pairwise task asks A / B / tie (its checks look like any pair: the caller counts
        # judgements in the database rather than from `answered`).
        answer = "a" if "pair-choice" in html else str(score)
        offered = {}
        for name, value in VALUE_RE.findall(html):
            offered.setdefault(name, []).append(value)
        unticked = set(CHECKBOX_RE.findall(html))
        fields = [name for name in fields if name not in unticked]
        for name in fields:
            item = name.split("-")[1]
            values = offered.get(name)
            data[name] = checks.get(item, answer if not values or answer in values else values[len(values) // 2])
        for item in SECONDS_RE.findall(html):
            data[f"seconds-{item}"] = "3.0"
        return url, data, fields, checks

    def do_hit(self, replay=False, score=3, think=0.0):
        """Take a task, answer it, submit it (twice with `replay`). False when no work is left."""
        if self.flow == "next" and self.next_page is not None:
            status, html = 200, self.next_page
        elif self.finished:
            return False
        else:
            status, html = self._start()
        if ACTION_RE.search(html) is None:
            return False
        if status != 200:
            raise RuntimeError(f"{self.worker_id}: HIT page answered {status}")
        url, data, fields, checks = self._answers(html, score)
        self.tokens.append(url.rstrip("/").rsplit("/", 1)[-1])
        if self.flow == "next":
            data["then"] = "next"
        if think:
            time.sleep(think)  # the annotator reading and rating (not part of any measured request)
        self.next_page = None
        for _ in range(2 if replay else 1):
            answered_url, status, body, seconds = self._open(url, data)
            self.submit_times.append(seconds)
            self._after_submit(answered_url, status, body)
        self.answered += len(fields) - len(checks)
        return True

    def _after_submit(self, url, status, body):
        if url.endswith("/done/"):
            self.finished = self.flow == "next"  # "next" found no other task: the thank-you page
            return
        if self.flow == "next" and status == 200 and ACTION_RE.search(body):
            self.next_page = body  # the next task's page (a replay: the task the first submission led to)
            return
        raise RuntimeError(f"{self.worker_id}: submit answered {status} at {url}")
