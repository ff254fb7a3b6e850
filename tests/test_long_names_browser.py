"""A 90-character name with no space in it (a judge's, a dataset's, a survey's, an ADEM model's) wraps
inside its table cell, in real headless Chromium on a phone and a desktop: no page is wider than its
window, and no cell naming it is wider than the window either (a table's column is otherwise as wide
as its longest word, so one such name made the judges table scroll sideways even on a desktop).

Screenshots go to $SCREENSHOT_DIR when it is set, else to pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse

from scoring.models import AdemModel, Judge
from tests.annotation.studies_helpers import make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1366, 900), "phone": (390, 844)}
LONG = "n" * 90

# The name of each kind as its table shows it: a judge's as its metric name.
JUDGE = f"judge:{LONG[:80]}"


@pytest.fixture
def long_named(researcher):
    dataset = make_survey(researcher, name=f"s{LONG}", dataset_name=f"d{LONG}").dataset
    Judge.objects.create(owner=researcher, name=LONG[:80], base_url="http://127.0.0.1:9/v1", model=f"m{LONG}")
    AdemModel.objects.create(owner=researcher, dataset=dataset, name=f"a{LONG}", status=AdemModel.Status.FAILED)
    return dataset


PAGES = {
    "judges": ("scoring:judges", JUDGE),
    "datasets": ("annotation:dataset_list", f"d{LONG}"),
    "surveys": ("annotation:survey_list", f"s{LONG}"),
    "adem": ("scoring:adem_models", f"a{LONG}"),
    "reports": ("analysis:reports_index", f"s{LONG}"),
    "metrics": ("scoring:metrics_index", f"d{LONG}"),
    "quality": ("annotation:quality_index", f"s{LONG}"),
    "dataset": ("annotation:dataset_detail", f"s{LONG}"),  # its surveys table
}

WIDEST_NAMING_CELL = """name => Math.max(0, ...Array.from(document.querySelectorAll('td'))
    .filter(cell => cell.textContent.includes(name)).map(cell => cell.getBoundingClientRect().width))"""

ALL_TABLES_FIT = """Array.from(document.querySelectorAll('.table-scroll'))
    .every(box => box.scrollWidth <= box.clientWidth)"""


def test_long_unbroken_names_wrap_in_the_researcher_tables_on_a_phone_and_a_desktop(
    long_named, browser, live_server, tmp_path
):
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    too_wide = []
    for label, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}{reverse('login')}")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        for key, (url_name, name) in PAGES.items():
            args = [long_named.pk] if key == "dataset" else []
            page.goto(f"{live_server.url}{reverse(url_name, args=args)}")
            where = f"{key} at {width}px"
            widest = page.evaluate(WIDEST_NAMING_CELL, name)
            assert widest > 0, f"{where}: no table cell names {name[:12]}…"
            if widest > width:
                too_wide.append(f"{where}: a cell naming {name[:12]}… is {widest:.0f}px wide")
            if not page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"):
                too_wide.append(f"{where}: the page is wider than the window")
            # On a desktop these few-column tables fit whole: nothing to scroll sideways for.
            if label == "desktop" and not page.evaluate(ALL_TABLES_FIT):
                too_wide.append(f"{where}: a table scrolls sideways")
            page.screenshot(path=str(shots / f"long-names-{key}-{label}.png"), full_page=True)
        page.close()
    assert not too_wide, "\n".join(too_wide)
