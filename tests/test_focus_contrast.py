"""Every focus outline in the style sheets keeps 3:1 contrast against the white page (WCAG 1.4.11)."""

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"


def _luminance(hex_colour):
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_focus_outlines_have_at_least_three_to_one_contrast_on_white():
    colours = []
    for sheet in STATIC.rglob("*.css"):
        colours += re.findall(r"outline:\s*\d+px\s+solid\s+(#[0-9a-fA-F]{6})", sheet.read_text())
    assert colours, "the style sheets set a focus outline colour"
    for colour in colours:
        contrast = 1.05 / (_luminance(colour) + 0.05)
        assert contrast >= 3, f"focus outline {colour} has {contrast:.1f}:1 on white"
