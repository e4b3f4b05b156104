"""notebooks/09_applications executed by ``flashscale run`` with tiny parameters (conftest's ``applications``,
whose campaign the workloads' own tests read too: test_bonnie_loop, test_pgbench_loop, test_transfer_loop): every
cell runs, the report is published, and the numbers it records are its table's."""
from __future__ import annotations

import pytest

from flashscale.analysis import applications as app_analysis

from conftest import APPLICATIONS

pytestmark = pytest.mark.long  # a whole study's notebooks: make test-long (CI runs it)

WORKLOADS = ["bonnie++", "pgbench", "transfer"]


def best(apps, workload: str, metric: str) -> dict:
    rows = apps[(apps["workload"] == workload) & (apps["metric"] == metric)]
    return rows.groupby("layout")["value"].max().to_dict()


@pytest.mark.root
@pytest.mark.notebook
def test_the_applications_notebook_records_the_numbers_of_its_table(applications):
    result, out, numbers = applications
    assert result.backend == "loop"
    apps = app_analysis.rated(result.table[result.table["phase"] == "workload"])  # too short: no value
    assert numbers["workloads"] == WORKLOADS and numbers["layouts"] == sorted(APPLICATIONS["LAYOUTS"])
    assert numbers["application_rows"] == len(apps) and set(apps["workload"]) == set(WORKLOADS)
    assert numbers["copy_bw_bytes"] == pytest.approx(best(apps, "transfer", "copy_bw"))
    assert numbers["tps"] == pytest.approx(best(apps, "pgbench", "tps"))
    assert set(numbers["copy_bw_bytes"]) == set(numbers["tps"]) == set(APPLICATIONS["LAYOUTS"])
    # a bottleneck verdict for each application on each layout, from what every device was doing
    assert {f"{layout}/{w}" for layout in APPLICATIONS["LAYOUTS"] for w in WORKLOADS} <= set(numbers["verdicts"])
    assert not apps["above_truth"].any()  # no application's rate of bytes above devices x the cap
    held = apps[apps["truth_bw_bytes"].notna() & apps["value"].notna()]  # a published rate: within 2% of its truth
    assert (held["value"] <= held["truth_bw_bytes"] * 1.02).all(), held[["layout", "metric", "value", "runtime_s"]]
    text = (out / "09_applications.html").read_text()
    assert "The application&#x27;s tax" in text or "The application's tax" in text
    assert "How this was made" in text and 'href="09_applications.html"' in (out / "index.html").read_text()
