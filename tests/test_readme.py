"""The README's tables are generated, so they say what the code does."""
from __future__ import annotations

from pathlib import Path

from flashscale.measure import results

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_lists_every_results_column_as_results_says():
    table = results.schema_markdown().strip()
    assert table in README.read_text()
    assert all(f"`{name}`" in table for name in results.ALL_COLUMNS)
