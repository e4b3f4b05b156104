"""Sphinx configuration of flashscale's documentation: MyST Markdown pages and the pydata theme. The reference is
generated from the code into the pages themselves (``make reference-docs``), so GitHub shows it too;
``_ext/flashscale_docs.py`` warns of a page that is stale against the code. ``make docs`` builds the site into
docs/_build/html; ``tests/test_docs.py`` builds it with every warning an error."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "flashscale"
author = "the flashscale developers"
copyright = "the flashscale developers"

extensions = ["myst_parser", "flashscale_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Headings up to ### get GitHub's anchors, so a link such as commands.md#flashscale-analyze works on the site and on
# GitHub alike.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]
# Option names and shell text stay as written: no -- turned into a dash, no quote curled.
smartquotes = False

html_theme = "pydata_sphinx_theme"
html_title = "flashscale"
html_static_path: list[str] = []
# make sample-report's report, where it was made: its folder imported/ is copied into the site, so the first-reading
# tutorial's link to imported/imported.html opens it. Without it the site builds the same, and the link says how.
SAMPLE = Path(__file__).parent.parent / "reports" / "sample" / "site"
html_extra_path = [str(SAMPLE)] if (SAMPLE / "imported" / "imported.html").is_file() else []
html_show_sourcelink = False
# The validation page's tables are wide: no section navigation beside them (the page has no sections to navigate).
html_sidebars = {"validation": []}
# Offline: no icon links, no version switcher, nothing fetched when a page is built or opened.
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": [],
}
