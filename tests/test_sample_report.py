"""The no-root path the README and the first-reading tutorial give: ``make sample-report``'s own recipe, read from
the Makefile and run as a user without root runs it (the venv's flashscale, a fresh folder for $(SAMPLE)), imports
the shipped fio output and publishes a report whose numbers are the analysis of the same table."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from flashscale.analysis import baseline_and_tax
from flashscale.measure import results
from flashscale.publish import report

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def recipe(target: str) -> list[str]:
    """The shell lines of a Makefile rule, continuation lines joined, ``@`` dropped."""
    found = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)+)", MAKEFILE.replace("\\\n\t", ""), re.M)
    assert found, f"the Makefile has no rule {target}"
    return [line.strip().lstrip("@") for line in found[1].splitlines()]


def test_the_recipe_is_read_as_make_runs_it_and_asks_for_no_root():
    """Continuation lines joined; its commands are an import and the imported campaign, behind the venv alone."""
    lines = recipe("sample-report")
    assert lines[0] == "rm -rf $(SAMPLE)" and "--pattern '{layout}/{bs}/run-{rep}" in lines[1]
    assert [line.split()[:2] for line in lines[1:3]] == [["$(BIN)/flashscale", "import"], ["$(BIN)/flashscale", "run"]]
    assert lines[2].split()[2] == "runners/imported.yaml" and lines[3].startswith("echo ")
    assert re.search(r"^sample-report: \$\(STAMP\)$", MAKEFILE, re.M), "it must not need deps (root's installs)"


@pytest.mark.notebook
def test_make_sample_report_publishes_a_report(tmp_path):
    """The recipe's lines, $(BIN) the venv's and $(SAMPLE) a fresh folder, run by bash -e in the checkout: the
    import and the report, whose baseline is the analysis of the imported table. (It runs as the suite's user;
    the recipe's only commands are the two above, which touch no device.)"""
    sample = tmp_path / "sample"
    script = "\n".join(recipe("sample-report")).replace("$(BIN)", str(Path(sys.executable).parent))
    script = script.replace("$(SAMPLE)", str(sample)).replace("$(CURDIR)/", "")
    done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "8 files: 8 imported (8 rows)" in done.stdout
    executed = sample / "site" / "imported" / "imported.ipynb"
    assert (sample / "site" / "imported" / "imported.html").is_file()
    numbers = report.read_record(executed)
    base = baseline_and_tax.baseline(baseline_and_tax.measured(results.load(sample / "data")), 2**20)
    assert numbers["backend"] == "imported"
    assert numbers["baseline_bw_bytes"]["read"] == pytest.approx(base["baseline_bw_bytes"].iloc[0], rel=1e-9)
