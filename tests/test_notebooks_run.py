"""Every notebook is executed by ``make test``: by a test that runs it through ``flashscale run`` and reads back the
numbers it recorded, or, for the others, by nbval at the notebook's own defaults (the Makefile's NBVAL_NOTEBOOKS)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_notebook_is_executed_by_a_test_or_by_nbval():
    nbval = set(re.search(r"^NBVAL_NOTEBOOKS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split())
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py") if p.name != Path(__file__).name)
    runners = {p.stem: p.read_text() for p in (ROOT / "runners").glob("*.yaml")}
    missing = []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        named = notebook.stem in tests or any(notebook.stem in text and f"{name}.yaml" in tests
                                              for name, text in runners.items())
        if f"notebooks/{notebook.name}" not in nbval and not named:
            missing.append(notebook.name)
    assert missing == [], f"no test executes {missing}"
    assert all((ROOT / path).exists() for path in nbval)
