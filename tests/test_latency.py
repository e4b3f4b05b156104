"""latency.from_fio on JSON real fio produced (tests/golden), against fio_output.parse and fio's own numbers."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from flashscale.measure import fio_output, raw, results
from flashscale.analysis import latency
from flashscale.analysis.baseline_and_tax import measured

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", ["read_2targets_3jobs", "write_1target", "randrw_mixed"])
def test_latency_columns_agree_with_the_results_table_and_with_fio(name):
    data = fio_output.load_output((GOLDEN / f"{name}.json").read_text())
    row, parsed = latency.from_fio(data), fio_output.parse(data)
    shared = sorted(set(row) & set(parsed))
    assert shared == sorted(["clat_mean_ns", "clat_p50_ns", "clat_p99_ns", "clat_p999_ns", "clat_p9999_ns",
                             "clat_stddev_ns", "lat_mean_ns"])
    assert {k: row[k] for k in shared} == {k: parsed[k] for k in shared}
    side = fio_output.main_side(data)
    assert row["clat_p90_ns"] == side["clat_ns"]["percentile"]["90.000000"]
    assert row["slat_mean_ns"] == side["slat_ns"]["mean"] and row["lat_stddev_ns"] == side["lat_ns"]["stddev"]
    assert row["slat_mean_ns"] + row["clat_mean_ns"] == pytest.approx(row["lat_mean_ns"], rel=0.05)


def test_the_main_side_of_a_mixed_run_is_the_one_that_moved_more(tmp_path):
    data = fio_output.load_output((GOLDEN / "randrw_mixed.json").read_text())
    first = data["jobs"][0]
    bigger = "read" if first["read"]["io_bytes"] >= first["write"]["io_bytes"] else "write"
    assert fio_output.main_side(data) is first[bigger]
    flipped = json.loads(json.dumps(data))
    flipped["jobs"][0]["read"]["io_bytes"], flipped["jobs"][0]["write"]["io_bytes"] = 0, 1
    assert fio_output.main_side(flipped) is flipped["jobs"][0]["write"]


def test_details_reads_every_measured_run_beside_the_table_and_skips_warmups(tmp_path):
    text = "fio: a note fio printed before its JSON\n" + (GOLDEN / "write_1target.json").read_text()
    data = fio_output.load_output(text)
    rows = []
    for rep, warmup in ((0, True), (1, False), (2, False)):
        folder = Path("raw") / f"rep{rep}"
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "fio.json").write_text(text)
        rows.append({"layout": "single", "devices": 1, "rw": "write", "bs": 1048576, "numjobs": 1, "iodepth": 1,
                     "rep": rep, "warmup": warmup, "raw_dir": str(folder), **fio_output.parse(data)})
    table = results.to_frame(rows)
    got = latency.details(raw.fio_outputs(tmp_path, measured(table)))
    assert list(got["rep"]) == [1, 2]
    assert got["clat_p99_ns"].tolist() == pytest.approx([fio_output.parse(data)["clat_p99_ns"]] * 2)
    points = latency.by_point(got)
    assert len(points) == 1 and points["iops"].iloc[0] == pytest.approx(fio_output.parse(data)["iops"])
    ratio = latency.littles_law(points)["littles_ratio"].iloc[0]
    assert math.isfinite(ratio) and 0 < ratio <= 1.05  # one job, depth 1: at most one I/O in flight
    shown = latency.table_us(points)
    assert shown["clat_p99_us"].iloc[0] == pytest.approx(fio_output.parse(data)["clat_p99_ns"] / 1e3, abs=0.05)
    assert not [c for c in shown.columns if c.endswith("_ns")]
