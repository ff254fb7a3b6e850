"""`make demo` runs as production does on plain-http localhost (issue 35, F14): debug off, plain 404s."""

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.annotation.prolific_helpers import STUDY_ID, make_prolific_survey, pid, session

ROOT = Path(__file__).resolve().parent.parent
SCRUBBED = ("DATABASE_URL", "DJANGO_DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "RATELAB_DATA_DIR")
SHOW = (
    "from django.conf import settings as s; "
    "print(s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
    "'127.0.0.1' in s.ALLOWED_HOSTS and 'localhost' in s.ALLOWED_HOSTS, "
    "s.STORAGES['staticfiles']['BACKEND'].startswith('whitenoise.'), len(s.SECRET_KEY)); print(s.SECRET_KEY)"
)


def demo_settings(data_dir, **extra):
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(RATELAB_DEMO="1", RATELAB_DATA_DIR=str(data_dir), **extra)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SHOW],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-2:]


def test_demo_settings_turn_debug_off_and_suit_plain_http_on_this_machine(tmp_path):
    figures, key = demo_settings(tmp_path)
    # debug off; no https redirect, Secure-only cookies or HSTS on http://127.0.0.1; static files as in production
    assert figures.split() == ["False", "False", "False", "False", "0", "True", "True", str(len(key))]
    assert len(key) >= 50 and "insecure" not in key
    # made once, kept (owner-only) for the next start, so logins survive a restart
    path = tmp_path / "demo-secret-key"
    assert path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert demo_settings(tmp_path)[1] == key
    # an explicit setting still wins
    assert demo_settings(tmp_path, DJANGO_DEBUG="1")[0].split()[0] == "True"


def test_make_demo_sets_demo_mode_and_collects_static_files():
    makefile = (ROOT / "Makefile").read_text()
    assert "demo: export RATELAB_DEMO = 1" in makefile
    recipe = makefile.split("\ndemo: setup\n", 1)[1].split("\n\n", 1)[0]
    assert "manage.py collectstatic --noinput" in recipe
    assert recipe.index("collectstatic") < recipe.index("runserver")


def test_a_draft_prolific_study_url_is_a_plain_not_open_yet_page(client, researcher, settings):
    settings.DEBUG = False
    survey = make_prolific_survey(researcher)  # a draft: never published, no Prolific study id
    url = f"/p/{survey.token}/?PROLIFIC_PID={pid(1)}&STUDY_ID={STUDY_ID}&SESSION_ID={session(1)}"
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 404
    assert "This study is not open yet" in html
    assert "URLconf" not in html and "urlpatterns" not in html.lower()
    # an unknown address: the site's plain 404 page
    missing = client.get("/no-such-page/")
    assert missing.status_code == 404 and "Page not found" in missing.content.decode()
    assert "URLconf" not in missing.content.decode()
