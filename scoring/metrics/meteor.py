"""METEOR 1.5 through the Java scorer shipped with pycocoevalcap, as nlg-eval runs it.

Same command line as pycocoevalcap (`-stdio -l en -norm`, 2 GB heap) and the same input cleaning
of the response ("|||" removed, double spaces collapsed). Unlike pycocoevalcap, which waits for
each statistics line before sending the next, a batch is streamed: a writer thread sends all
SCORE lines while this thread reads the statistics, then one EVAL line scores the whole batch.
One scorer process per Python process, started on first use and reused; a forked worker starts its
own. Several references: the jar's own rule (it scores against each and keeps the best).
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pycocoevalcap.meteor.meteor as _pycoco_meteor

from scoring.metrics import resources
from scoring.metrics.registry import Metric, MetricUnavailable, describe_family, register

JAR_DIR = Path(_pycoco_meteor.__file__).resolve().parent
JAR = JAR_DIR / "meteor-1.5.jar"
BATCH = 1000  # pairs per EVAL line; results do not depend on it


class ScorerCrashed(RuntimeError):
    """The jar stopped mid-run. The next `scorer()` call starts a fresh one, so a retry may succeed."""


class MeteorScorer:
    """One running `meteor-1.5.jar -stdio` process."""

    def __init__(self, java=None):
        java = java or shutil.which("java")
        if not java:
            raise MetricUnavailable(
                "METEOR needs Java (the pycocoevalcap METEOR 1.5 jar): install a JRE, e.g. "
                "`apt-get install default-jre-headless`, or use the separately named metric `meteor_nltk`."
            )
        # kept open for the life of the process; its tail goes into the error if the jar dies
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(
            [java, "-jar", "-Xmx2G", str(JAR), "-", "-", "-stdio", "-l", "en", "-norm"],
            cwd=JAR_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lock = threading.Lock()
        self.pid = os.getpid()

    def score(self, hyps, refs):
        out = []
        with self._lock:
            for start in range(0, len(hyps), BATCH):
                out.extend(self._score_batch(hyps[start : start + BATCH], refs[start : start + BATCH]))
        return out

    def _score_batch(self, hyps, refs):
        lines = [
            " ||| ".join(("SCORE", " ||| ".join(_one_line(r) for r in rs), _clean_hypothesis(h)))
            for h, rs in zip(hyps, refs, strict=True)
        ]
        errors = []
        writer = threading.Thread(target=self._write, args=(lines, errors), daemon=True)
        writer.start()
        stats = [self._readline() for _ in lines]
        writer.join()
        if errors:
            raise errors[0]
        self._write(["EVAL ||| " + " ||| ".join(stats)], errors)
        scores = [float(self._readline()) for _ in lines]
        self._readline()  # the aggregate over the batch, not needed
        return scores

    def _write(self, lines, errors):
        try:
            self._proc.stdin.write(("\n".join(lines) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except OSError as exc:  # the jar died; the reader reports it
            errors.append(exc)

    def _readline(self):
        line = self._proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].decode("utf-8", "replace")
            _scorers.pop(self.pid, None)
            raise ScorerCrashed(f"the METEOR jar stopped (exit {self._proc.poll()}): {tail}")
        return line.decode("utf-8").strip()

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.kill()
            self._proc.wait()


def _one_line(text):
    # the protocol is line based; pycocoevalcap would hang on a newline inside a text
    return " ".join(text.splitlines())


def _clean_hypothesis(text):
    # pycocoevalcap's own cleaning of the response, kept so that scores agree
    return _one_line(text.replace("|||", "")).replace("  ", " ")


_scorers = {}  # pid -> scorer: a forked worker must not share its parent's pipes
_scorers_lock = threading.Lock()


def scorer():
    """This process's scorer, started on first use (Java start-up takes seconds)."""
    with _scorers_lock:
        pid = os.getpid()
        if pid not in _scorers:
            _scorers[pid] = MeteorScorer()
            atexit.register(_scorers[pid].close)
        return _scorers[pid]


def _family(batch, names):
    return {"meteor": scorer().score(batch.hyps, batch.refs)}


register(
    Metric(
        "meteor",
        "1",
        _family,
        {"jar": "pycocoevalcap meteor-1.5.jar", "args": "-stdio -l en -norm"},
        "METEOR 1.5 (Java scorer from pycocoevalcap, as nlg-eval); needs Java.",
    )
)


def _start_jar():
    scorer().score(["warm"], [["warm"]])  # the JVM started and the jar's tables read


JAR_STARTED = resources.declare(
    resources.Resource(
        "meteor_jar", "the METEOR 1.5 jar (Java)", 5.5, _start_jar, lambda: os.getpid() in _scorers, own_process=True
    )
)
describe_family(_family, "METEOR 1.5 (Java)", (JAR_STARTED.key,))
