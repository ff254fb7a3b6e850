"""The completion code each Prolific submission was made with, and what it says to the researcher.

Prolific lists, with each submission, the code the participant came back with (`study_code`;
"NOCODE" when they submitted without one). A participant who types a code by hand may type any
code, so the researcher's page names each one: this study's completion code, its failed-attention
code, none, or a code that is not one of the study's (worth a look before approving).
"""

from annotation.models import ProlificSubmission

MAX_CODE = ProlificSubmission._meta.get_field("study_code").max_length


def listed_code(item):
    """The code Prolific lists for a submission, as stored; "" when the listing has none."""
    code = item.get("study_code")
    return code.strip()[:MAX_CODE] if isinstance(code, str) else ""


def code_state(study, code):
    """{"state": "completed" | "failed_check" | "none" | "unknown" | "", "text": words for the page}."""
    if not code:
        return {"state": "", "text": "not listed yet"}
    if code == study.completed_code:
        return {"state": "completed", "text": f"{code} (completed)"}
    if code == study.failed_check_code:
        return {"state": "failed_check", "text": f"{code} (failed an attention check)"}
    if code.upper() == "NOCODE":
        return {"state": "none", "text": "no code: submitted on Prolific without one"}
    return {"state": "unknown", "text": f"{code}: not one of this study's codes"}
