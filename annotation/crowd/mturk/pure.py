"""Pure MTurk helpers (no Django, no boto3): ExternalQuestion XML, fees, request tokens, money."""

import hashlib
import re
import xml.etree.ElementTree as ET
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import urlparse
from xml.sax.saxutils import escape

EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)
# MTurk accepts FrameHeight 0 (size to content) up to this many pixels.
MAX_FRAME_HEIGHT = 10_000
MAX_REQUEST_TOKEN = 64
# A HIT id as MTurk writes it, for the "already exists" error message that names one.
HIT_ID_RE = re.compile(r"\b([A-Z0-9]{30})\b")
# The shapes MTurk's own API model gives its ids (botocore's mturk 2017-01-17 service model):
# a worker id is a `CustomerId` (^A[A-Z0-9]+$), HIT and assignment ids are `EntityId`s
# (^[A-Z0-9]+$), each 1 to 64 characters. Anything else in a task URL was not written by MTurk.
MAX_ID_LENGTH = 64
WORKER_ID_RE = re.compile(r"A[A-Z0-9]{1,63}", re.ASCII)
ENTITY_ID_RE = re.compile(r"[A-Z0-9]{1,64}", re.ASCII)

CENT = Decimal("0.01")


def dollars(cents):
    """MTurk's money format: a string with two decimals ("0.50")."""
    return str((Decimal(cents) / 100).quantize(CENT))


def cents_from_dollars(text):
    return int((Decimal(text) * 100).to_integral_value(rounding=ROUND_HALF_UP))


def commission_rate(max_assignments):
    """MTurk's fee: 20% of rewards and bonuses, 40% for HITs with 10 or more assignments."""
    return Decimal("0.40") if max_assignments >= 10 else Decimal("0.20")


def cost_estimate(*, n_hits, assignments_per_hit, reward_cents):
    """What publishing `n_hits` HITs costs in cents, fees included (MTurk's minimum fee: 1 cent)."""
    rate = commission_rate(assignments_per_hit)
    fee_per_assignment = max(Decimal(1), (Decimal(reward_cents) * rate).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    n_assignments = n_hits * assignments_per_hit
    rewards = n_assignments * reward_cents
    fees = int(n_assignments * fee_per_assignment)
    return {
        "hits": n_hits,
        "assignments_per_hit": assignments_per_hit,
        "assignments": n_assignments,
        "reward_cents": reward_cents,
        "fee_rate": float(rate),
        "rewards_cents": rewards,
        "fees_cents": fees,
        "total_cents": rewards + fees,
    }


def request_token(*parts):
    """A UniqueRequestToken from stable identifiers: the same parts always give the same token."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()
    return f"ratelab-{digest}"[:MAX_REQUEST_TOKEN]


def external_question_xml(*, url, frame_height):
    """The ExternalQuestion document that shows `url` in MTurk's frame."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


class QuestionError(ValueError):
    pass


def parse_external_question(document):
    """Check a document against the shape of MTurk's ExternalQuestion schema; returns (url, height).

    The schema is a sequence of exactly ExternalURL (an https URL) and FrameHeight (an integer)
    in the ExternalQuestion namespace.
    """
    try:
        root = ET.fromstring(document.encode() if isinstance(document, str) else document)
    except ET.ParseError as error:
        raise QuestionError(f"not well-formed XML: {error}") from None
    ns = f"{{{EXTERNAL_QUESTION_NS}}}"
    if root.tag != f"{ns}ExternalQuestion":
        raise QuestionError(f"root element is {root.tag}, not ExternalQuestion in the MTurk namespace")
    children = list(root)
    if [child.tag for child in children] != [f"{ns}ExternalURL", f"{ns}FrameHeight"]:
        raise QuestionError("ExternalQuestion must hold exactly ExternalURL then FrameHeight")
    if (root.text or "").strip() or any((child.tail or "").strip() for child in children):
        raise QuestionError("ExternalQuestion holds stray text")
    url = (children[0].text or "").strip()
    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.netloc:
        raise QuestionError(f"ExternalURL must be an https URL, got {url!r}")
    try:
        height = int((children[1].text or "").strip())
    except ValueError:
        raise QuestionError("FrameHeight must be an integer") from None
    if not 0 <= height <= MAX_FRAME_HEIGHT:
        raise QuestionError(f"FrameHeight must be between 0 and {MAX_FRAME_HEIGHT}")
    return url, height


def task_params_problem(*, assignment_id, hit_id, worker_id):
    """Why MTurk could not have written these task-URL parameters, or "" when their shape fits.

    The message names the parameter and says what MTurk's ids look like, never echoing the value.
    """
    checks = (
        ("workerId", worker_id, WORKER_ID_RE, "an A followed by capital letters and digits"),
        ("assignmentId", assignment_id, ENTITY_ID_RE, "capital letters and digits"),
        ("hitId", hit_id, ENTITY_ID_RE, "capital letters and digits"),
    )
    for name, value, pattern, shape in checks:
        if not value:
            return f"The {name} parameter is missing."
        if not isinstance(value, str) or not pattern.fullmatch(value):
            return f"The {name} parameter is not an MTurk id ({shape}, at most {MAX_ID_LENGTH} characters)."
    return ""
