"""A report published from an imported folder by ``flashscale run runners/imported.yaml -p IMPORTED=DIR``: it says on
its first lines that the data was imported and from what, and records the numbers the analysis gives of the same
table (bench-fio's layout of real fio 3.33 output, tests/golden/imported/benchfio)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.analysis import baseline_and_tax, stats
from flashscale.measure.fio_import import importer
from flashscale.measure import results
from flashscale.measure.fio_import.file_names import Naming, read_map
from flashscale.publish import report

ROOT = Path(__file__).resolve().parents[1]
BENCHFIO = ROOT / "tests" / "golden" / "imported" / "benchfio"


@pytest.mark.notebook
def test_a_report_is_published_from_an_imported_folder(tmp_path):
    folder = tmp_path / "imported"
    naming = Naming(pattern="{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json",
                    rules=tuple(read_map(BENCHFIO.parent / "benchfio-map.yaml")))  # the map docs/howto/import.md shows
    assert importer.run_import([str(BENCHFIO)], folder, naming).line() == "8 files: 8 imported (8 rows)"
    reports = tmp_path / "reports"
    assert cli.main(["run", str(ROOT / "runners" / "imported.yaml"), "-p", f"IMPORTED={folder}",
                     "--reports", str(reports)]) == 0
    executed = reports / "imported" / "imported.ipynb"
    assert (reports / "imported" / "imported.html").exists() and (reports / "imported" / "index.html").exists()
    first = next(o for c in json.loads(executed.read_text())["cells"] if c["cell_type"] == "code"
                 for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))
    said = "".join(first["data"]["text/markdown"])
    assert said.startswith("- Imported, not measured by flashscale: 8 rows from 8 files of fio's output under "
                           "benchfio/ (json; fio-3.33")
    shown = [text for c in json.loads(executed.read_text())["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) for text in [*o.get("data", {}).values(), o.get("text", "")]]
    assert "benchfio/jbod/1m/run-1/read-1-2.json" in str(shown)  # the sources, said from the folder imported
    assert str(BENCHFIO.parent) not in str(shown) and str(tmp_path) not in str(shown)  # no machine's paths
    numbers = report.read_record(executed)
    table = results.load(folder)
    base = baseline_and_tax.baseline(baseline_and_tax.measured(table), 2**20)
    assert numbers["backend"] == "imported"
    assert numbers["baseline_bw_bytes"] == {"read": pytest.approx(base["baseline_bw_bytes"].iloc[0])}
    summary = stats.summary_intervals(table, reference="jbod", baseline_bs=2**20).set_index("layout")
    assert numbers["layouts"]["jbod/2/read"]["efficiency"] == pytest.approx(summary.loc["jbod", "efficiency"])
    assert set(numbers["saturation"]) == {"jbod/2/read", "single/1/read"}
