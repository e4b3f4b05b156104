"""`flashscale analyze` on small tables whose answers are worked by hand."""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from flashscale import cli

MiB = 1048576
COLUMNS = ["layout", "devices", "rw", "bs", "numjobs", "iodepth", "rep", "warmup", "bw_bytes"]
ROWS = [
    # the baseline: best single-device read at 1 MiB is 150 (numjobs 2); the warm-up's 999 is ignored
    ("single", 1, "read", MiB, 1, 1, 1, False, 100.0),
    ("single", 1, "read", MiB, 2, 1, 0, True, 999.0),
    ("single", 1, "read", MiB, 2, 1, 1, False, 150.0),
    # jbod at 4 devices: numjobs 8 averages (590 + 610) / 2 = 600 > 560 -> efficiency 600 / (4 x 150) = 1.0
    ("jbod", 4, "read", MiB, 4, 1, 1, False, 560.0),
    ("jbod", 4, "read", MiB, 8, 1, 1, False, 590.0),
    ("jbod", 4, "read", MiB, 8, 1, 2, False, 610.0),
    # raid0 at 4 devices: best 540 at 4 MiB -> efficiency 540 / 600 = 0.9, tax 1 - 540 / 600 = 0.1
    ("raid0", 4, "read", MiB, 8, 1, 1, False, 500.0),
    ("raid0", 4, "read", 4 * MiB, 8, 1, 1, False, 540.0),
]


def table(tmp_path: Path, rows=ROWS, columns=COLUMNS, suffix=".csv", name="results") -> Path:
    frame = pd.DataFrame(rows, columns=columns)
    path = tmp_path / f"{name}{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    return path


def analyze(capsys, *args) -> tuple[int, str, str]:
    status = cli.main(["analyze", *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_efficiency_and_tax_match_the_hand_worked_numbers(tmp_path, capsys, suffix):
    status, out, _ = analyze(capsys, table(tmp_path, suffix=suffix), "--reference", "jbod", "--format", "csv")
    assert status == 0
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    assert got.loc["single", "baseline_bw_bytes"] == 150
    assert got.loc["jbod", "best_bw_bytes"] == 600 and got.loc["jbod", "best_numjobs"] == 8
    assert got.loc["jbod", "efficiency"] == pytest.approx(1.0) and got.loc["jbod", "tax"] == 0
    assert got.loc["raid0", "best_bs"] == 4 * MiB
    assert got.loc["raid0", "efficiency"] == pytest.approx(0.9)
    assert got.loc["raid0", "tax"] == pytest.approx(0.1)
    assert pd.isna(got.loc["single", "tax"])  # no jbod row at one device


def test_by_bs_compares_block_size_by_block_size(tmp_path, capsys):
    status, out, _ = analyze(capsys, table(tmp_path), "--reference", "jbod", "--by", "bs", "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index(["layout", "bs"])
    assert status == 0
    assert got.loc[("raid0", MiB), "tax"] == pytest.approx(1 - 500 / 600)
    assert pd.isna(got.loc[("raid0", 4 * MiB), "tax"])  # jbod was not measured at 4 MiB


def test_the_table_format_prints_every_layout(tmp_path, capsys):
    status, out, _ = analyze(capsys, table(tmp_path), "--reference", "jbod")
    assert status == 0 and all(name in out for name in ("single", "jbod", "raid0", "efficiency", "tax"))


def test_unknown_reference_missing_column_and_missing_baseline_fail_with_the_value_named(tmp_path, capsys):
    path = table(tmp_path)
    status, _, err = analyze(capsys, path, "--reference", "raid5")
    assert status == 1 and "'raid5'" in err
    no_bw = table(tmp_path, rows=[r[:-1] for r in ROWS], columns=COLUMNS[:-1], name="no_bw")
    status, _, err = analyze(capsys, no_bw, "--reference", "jbod")
    assert status == 1 and "bw_bytes" in err
    status, _, err = analyze(capsys, path, "--reference", "jbod", "--baseline-bs", 4096)
    assert status == 1 and "4096" in err and "baseline" in err
    status, _, err = analyze(capsys, tmp_path / "nope.parquet", "--reference", "jbod")
    assert status == 1 and "nope.parquet" in err


def test_ceilings_name_the_binding_limit_and_the_fraction_reached(tmp_path, capsys):
    ceilings = tmp_path / "ceilings.yaml"
    # 4 devices x 160 = 640 for the devices; one 625-byte/s link for the network: the network binds at 4 devices
    ceilings.write_text("device_read_bw_bytes: 160\nnetwork_links: 1\nnetwork_link_bw_bytes: 625\n")
    status, out, _ = analyze(capsys, table(tmp_path), "--reference", "jbod", "--ceilings", ceilings, "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    assert status == 0
    assert got.loc["jbod", "expected_ceiling_bw_bytes"] == 625 and got.loc["jbod", "binding_limit"] == "network"
    assert got.loc["jbod", "fraction_of_ceiling"] == pytest.approx(600 / 625)
    assert got.loc["single", "expected_ceiling_bw_bytes"] == 160  # one device: its datasheet binds
    ceilings.write_text("device_read_bw_bytes: fast\n")
    status, _, err = analyze(capsys, table(tmp_path), "--reference", "jbod", "--ceilings", ceilings)
    assert status == 1 and "'fast'" in err


def test_fit_adds_the_knee_and_refuses_to_fit_too_few_points(tmp_path, capsys):
    status, out, _ = analyze(capsys, table(tmp_path), "--reference", "jbod", "--fit", "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    assert status == 0
    assert got.loc["jbod", "knee_numjobs"] == 8  # 560 at 4 jobs is below 95% of 600; 600 at 8 is the plateau
    assert pd.isna(got.loc["jbod", "usl_sigma"])  # two numjobs values cannot support a three-parameter law
    assert got.loc["jbod", "fit_note"].startswith("usl: not fitted, too few points: 2 distinct N, usl needs at least 4")
