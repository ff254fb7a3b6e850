"""Design rule: nothing outside annotation/crowd/mturk/provider.py imports boto3 or botocore."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a plain import, or the lazy stand-in the provider uses so that loading the apps skips boto3
IMPORT = re.compile(r"^\s*(import|from)\s+(boto3|botocore)\b|lazy_module\(\"(boto3|botocore)\b", re.MULTILINE)


def test_only_the_mturk_provider_module_imports_boto3():
    importers = sorted(
        str(path.relative_to(ROOT))
        for folder in ("annotation", "scoring", "analysis", "config")
        if (ROOT / folder).is_dir()
        for path in (ROOT / folder).rglob("*.py")
        if IMPORT.search(path.read_text())
    )
    assert importers == ["annotation/crowd/mturk/provider.py"]
