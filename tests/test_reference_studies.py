"""The seed studies' published figures, reproduced from data/reference with our functions, and the notebook."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest

from flashscale.analysis import baseline_and_tax as analysis
from flashscale.analysis.prediction import ceilings
from flashscale.notebooks import execute
from flashscale.publish import report
from flashscale.errors import AnalysisError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "data" / "reference"
NOTEBOOK = ROOT / "notebooks" / "reference_studies.ipynb"


def _parameters(name: str) -> dict:
    return pd.read_csv(REFERENCE / name).set_index("parameter")["value"].to_dict()


@pytest.fixture(scope="module")
def summary000() -> pd.DataFrame:
    return analysis.summarize(pd.read_csv(REFERENCE / "seed000_results.csv"), reference="jbod")


@pytest.fixture(scope="module")
def ceil003() -> pd.DataFrame:
    peaks = pd.read_csv(REFERENCE / "seed003_results.csv")
    return ceilings.ceiling_table(peaks, _parameters("seed003_system.csv")).set_index("rw")


def _row(summary: pd.DataFrame, layout: str, rw: str) -> pd.Series:
    return summary[(summary["layout"] == layout) & (summary["rw"] == rw)].iloc[0]


def test_every_reference_table_names_its_source():
    for path in REFERENCE.glob("*.csv"):
        table = pd.read_csv(path)
        assert "source" in table.columns and table["source"].notna().all(), path.name


def test_seed000_imsm_read_tax_is_9_1_percent(summary000):
    tax = _row(summary000, "md-raid0-imsm", "read")["tax"]
    assert tax == pytest.approx(1 - 29.9 / 32.9)  # 0.09119
    assert tax == pytest.approx(0.091, abs=5e-4)


def test_seed000_baseline_and_efficiency(summary000):
    jbod = _row(summary000, "jbod", "read")
    assert jbod["baseline_bw_bytes"] == pytest.approx(2.78e9)
    assert jbod["efficiency"] == pytest.approx(32.9 / (12 * 2.78))  # 0.986: "close to 100%"
    # the authors' "only 31% scalability" for GPFS writes is 18.8 / (12 x 2.05) = 76% from their own numbers
    assert _row(summary000, "gpfs-1m", "write")["efficiency"] == pytest.approx(18.8 / 24.6)


def test_seed003_network_fractions_and_binding_limit(ceil003):
    assert ceil003.loc["read", "fraction_of_network"] == pytest.approx(132 / 136.4)  # 0.9677
    assert ceil003.loc["write", "fraction_of_network"] == pytest.approx(121 / 136.4)  # 0.8871
    assert ceil003.loc["read", "fraction_of_network"] == pytest.approx(0.97, abs=0.005)
    assert ceil003.loc["write", "fraction_of_network"] == pytest.approx(0.89, abs=0.005)
    assert set(ceil003["binding_limit"]) == {"network"}
    assert ceil003.loc["read", "ceiling_device_bw_bytes"] == pytest.approx(132 * 3.2e9)  # 422.4 GB/s


def test_seed004_table3_ratios():
    sheet = pd.read_csv(REFERENCE / "seed004_datasheet.csv")
    table = ceilings.datasheet_vs_measured(sheet, sheet).set_index(["rw", "bs", "metric"])
    assert table.loc[("read", 4096, "iops"), "ratio"] == pytest.approx(704 / 785)
    assert table.loc[("write", 4096, "iops"), "ratio"] == pytest.approx(401 / 205)
    assert table["ratio"].notna().sum() == 4  # the four cells where the datasheet gives a figure


def test_claims_where_the_authors_arithmetic_differs(summary000, ceil003):
    sheet = pd.read_csv(REFERENCE / "seed004_datasheet.csv")
    table3 = ceilings.datasheet_vs_measured(sheet, sheet)
    seq = table3.query("metric == 'bw_bytes' and bs == 131072").assign(devices=1)
    seq = seq.rename(columns={"measured": "best_bw_bytes"})
    ceil004 = ceilings.ceiling_table(seq, _parameters("seed004_system.csv"))
    ceil000 = ceilings.ceiling_table(summary000, _parameters("seed000_system.csv"))
    tables = {"seed000_summary": summary000, "seed000_ceilings": ceil000, "seed003_ceilings": ceil003.reset_index(),
              "seed004_table3": table3, "seed004_ceilings": ceil004}
    comparison = analysis.compare_with_stated(pd.read_csv(REFERENCE / "claims.csv"), tables)
    assert set(comparison.loc[~comparison["agrees"], "claim"]) == {"gpfs_1m_write_efficiency", "pcie_gen2_x8_limit"}


def test_compare_with_stated_by_hand():
    table = pd.DataFrame([dict(layout="a", rw="read", tax=0.0912), dict(layout="b", rw="read", tax=0.2)])
    claims = pd.DataFrame([dict(claim="c1", table="t", quantity="tax", layout="a", rw="read", stated=0.091,
                                tolerance=0.0005)])
    row = analysis.compare_with_stated(claims, {"t": table}).iloc[0]
    assert row["ours"] == pytest.approx(0.0912) and row["difference"] == pytest.approx(0.0002) and row["agrees"]
    with pytest.raises(AnalysisError, match="'u'"):
        analysis.compare_with_stated(claims.assign(table="u"), {"t": table})
    with pytest.raises(AnalysisError, match="claim 'c1': 2 row"):
        analysis.compare_with_stated(claims.assign(layout=None), {"t": table})


def test_notebook_is_thin_and_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for cell in code:
        assert not cell.get("outputs") and cell.get("execution_count") is None
        assert "def " not in cell.source
        assert len(cell.source.splitlines()) <= 10


@pytest.mark.notebook
def test_notebook_reproduces_the_reference_numbers(tmp_path):
    out = tmp_path / "reference_studies.ipynb"
    execute.execute_notebook(NOTEBOOK, out, {"REFERENCE_DIR": str(REFERENCE)}, NOTEBOOK.parent, progress_bar=False)
    numbers = report.read_record(out)
    assert numbers["imsm_read_tax"]["ours"] == pytest.approx(0.0912, abs=5e-4)
    assert numbers["read_network_fraction"]["ours"] == pytest.approx(0.97, abs=5e-3)
    assert numbers["write_network_fraction"]["ours"] == pytest.approx(0.89, abs=5e-3)
    assert numbers["imsm_read_tax"]["agrees"] and numbers["read_network_fraction"]["agrees"]
    assert not numbers["gpfs_1m_write_efficiency"]["agrees"]
    assert numbers["seed003_binding_limit"] == ["network"]
    assert numbers["seed004_pcie_gen2_x8_bw_bytes"] == pytest.approx(4.0e9)
