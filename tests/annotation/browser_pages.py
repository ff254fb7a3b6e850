"""What the crowd-platform browser tests share: the two window sizes, the width check, answering a
rating task as asked, and where screenshots go ($SCREENSHOT_DIR when set)."""

import os
import re
from pathlib import Path

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}


def fits(page):
    """No part of the page is wider than its window.

    Against `clientWidth`, not `innerWidth`: a phone's browser (a context with `is_mobile`) widens
    its layout to the widest box, and `innerWidth` with it, so a page 590 px wide on a 390 px phone
    "fit" its 590 px `innerWidth`."""
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def answer_all(page):
    """Rate every item: the asked score on an attention check ("Please choose N"), else 4."""
    for item in page.query_selector_all(".task-item"):
        asked = re.search(r"Please choose (\d)", item.inner_text())
        item.query_selector(f'input[type=radio][value="{asked.group(1) if asked else 4}"]').click()


def screenshot_dir(tmp_path):
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots
