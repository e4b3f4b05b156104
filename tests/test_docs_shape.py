"""What a newcomer reads is short and says tasks in the user's words (issue 52): no how-to over about 1,500 words,
and no module path (``flashscale.x.y``, ``analysis.x``, ``lib/flashscale/...``) in a how-to or a tutorial, outside
the marks that name a covering test. Module paths belong to the reference and the explanation.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_docs import module_paths

ROOT = Path(__file__).resolve().parents[1]
HOWTOS = sorted((ROOT / "docs" / "howto").glob("*.md"))
NEWCOMERS = HOWTOS + sorted((ROOT / "docs" / "tutorials").glob("*.md"))
MAX_WORDS = 1500
MARK = re.compile(r"<!-- doc: .*? -->")


def words(page: Path) -> int:
    return len(page.read_text().split())


@pytest.mark.parametrize("page", HOWTOS, ids=lambda p: p.name)
def test_a_howto_is_at_most_about_1500_words(page):
    assert words(page) <= MAX_WORDS, f"{page.name} is {words(page)} words: move its reference to docs/reference or docs/explanation"


@pytest.mark.parametrize("page", NEWCOMERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_howto_or_tutorial_names_no_module_path(page):
    text = MARK.sub("", page.read_text())
    named = module_paths(text) + re.findall(r"lib/flashscale[\w/.]*", text)
    assert not named, f"{page.relative_to(ROOT)} names module paths, which belong to the reference: {named}"


def test_a_module_path_is_found_outside_marks_only():
    text = MARK.sub("", "Run it (`analysis.stats.tax_tests`, lib/flashscale/cli).\n<!-- doc: not run: tests/x.py -->\n")
    assert module_paths(text) == ["flashscale.analysis.stats.tax_tests"] and "lib/flashscale/cli" in text
    assert "tests/x.py" not in text
