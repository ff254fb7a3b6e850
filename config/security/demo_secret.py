"""The demo's SECRET_KEY (`make demo`, RATELAB_DEMO=1): made once per checkout, kept in the data directory.

Debug is off in the demo, and production settings refuse to start without a key; a fixed key in the
code would be public. The key is generated on first use and read back afterwards, so logins and
annotator cookies survive a restart of `make demo`.
"""

import os
from pathlib import Path

from django.core.management.utils import get_random_secret_key


def demo_secret_key(data_dir: Path) -> str:
    path = Path(data_dir) / "demo-secret-key"
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if len(key) >= 50:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = get_random_secret_key()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")
    return key
