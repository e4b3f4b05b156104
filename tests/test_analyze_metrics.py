"""`analyze --metric`: IOPS and fio's completion-latency percentiles summarized as bandwidth is, recovered from real
fio output (tests/golden/randread_4k: 4 KiB random reads, 3 runs of single and jbod, made by its make.py)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale import cli
from flashscale.analysis import metrics, stats
from flashscale.errors import AnalysisError
from flashscale.measure import fio_output

GOLDEN = Path(__file__).parent / "golden" / "randread_4k"
DEVICES = {"single": 1, "jbod": 2}


def fio_runs() -> dict[str, list[dict]]:
    """Each layout's runs as fio wrote them."""
    return {layout: [json.loads((GOLDEN / layout / f"rep{rep}.json").read_text()) for rep in range(3)]
            for layout in DEVICES}


def results(tmp_path: Path, layouts=DEVICES) -> Path:
    """The golden runs as a results table: each run's row read by ``fio_output.parse``, as the recorder reads it."""
    rows = [{"layout": layout, "devices": DEVICES[layout], "rw": "randread", "bs": 4096, "numjobs": 2, "iodepth": 1,
             "rep": rep, "warmup": False, "phase": "measure", "status": "ok", **fio_output.parse(data)}
            for layout in layouts for rep, data in enumerate(fio_runs()[layout])]
    path = tmp_path / "results.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def analyze(capsys, *args) -> tuple[int, str, str]:
    status = cli.main(["analyze", *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_iops_are_fio_s_own_and_the_table_shows_them_in_kiops(tmp_path, capsys):
    status, out, _ = analyze(capsys, results(tmp_path), "--reference", "jbod", "--metric", "iops", "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    for layout, runs in fio_runs().items():  # fio's own: the jobs' read IOPS, summed (group_reporting: one entry)
        own = np.mean([sum(job["read"]["iops"] for job in data["jobs"]) for data in runs])
        assert got.loc[layout, "best_iops"] == pytest.approx(own, rel=1e-9)
        assert got.loc[layout, "best_iops_lo"] < own < got.loc[layout, "best_iops_hi"]
    assert got.loc["jbod", "tax"] == 0 and "best_bw_bytes" not in got.columns
    status, out, _ = analyze(capsys, results(tmp_path), "--reference", "jbod", "--metric", "iops")
    header, *rows = out.splitlines()
    assert status == 0 and "best kIOPS" in header
    shown = {row.split()[0]: float(row.split()[3]) for row in rows[:2]}  # "jbod 2 randread 151 (148–153) ..."
    assert shown["single"] == pytest.approx(got.loc["single", "best_iops"] / 1e3, rel=0.006)  # three digits


def test_iops_of_a_table_without_them_are_its_bandwidth_over_the_block_size_and_said(tmp_path, capsys):
    frame = pd.read_csv(results(tmp_path)).drop(columns=["iops"])
    frame.to_csv(tmp_path / "bandwidth_only.csv", index=False)
    status, out, _ = analyze(capsys, tmp_path / "bandwidth_only.csv", "--reference", "jbod", "--metric", "iops",
                             "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    bandwidth = frame.groupby("layout")["bw_bytes"].mean() / 4096
    assert got["best_iops"].to_dict() == pytest.approx(bandwidth.to_dict(), rel=1e-9)
    _, out, _ = analyze(capsys, tmp_path / "bandwidth_only.csv", "--reference", "jbod", "--metric", "iops")
    assert metrics.IOPS_FROM_BW in " ".join(out.split())


def test_the_tax_in_iops_is_the_tax_in_bandwidth_at_one_block_size_and_its_interval_too(tmp_path, capsys):
    """IOPS x bs is the bandwidth: at one block size the two summaries' taxes and intervals are the same; read as
    bytes/s, IOPS gave a tax interval from -6e294 (the test's least spread is one block in the run)."""
    path = results(tmp_path)
    _, out, _ = analyze(capsys, path, "--reference", "jbod", "--metric", "iops", "--format", "csv")
    iops = pd.read_csv(io.StringIO(out)).set_index("layout")
    _, out, _ = analyze(capsys, path, "--reference", "single", "--metric", "iops", "--format", "csv")
    _, out_bw, _ = analyze(capsys, path, "--reference", "single", "--format", "csv")
    by_iops, by_bw = (pd.read_csv(io.StringIO(text)).set_index("layout") for text in (out, out_bw))
    for column in ("efficiency", "efficiency_lo", "efficiency_hi"):
        assert iops[column].to_dict() == pytest.approx(by_bw[column].to_dict(), rel=1e-6, nan_ok=True)
    assert (by_iops["tax_verdict"] == by_bw["tax_verdict"]).all()


def test_p99_is_fio_s_own_percentile_at_the_best_point(tmp_path, capsys):
    status, out, _ = analyze(capsys, results(tmp_path), "--reference", "jbod", "--metric", "p99", "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).set_index("layout")
    for layout, runs in fio_runs().items():  # group_reporting: the first job entry holds the group's percentiles
        own = np.mean([data["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"] for data in runs])
        assert got.loc[layout, "clat_p99_ns"] == pytest.approx(own, rel=1e-9)
    assert got.loc["jbod", "latency_tax"] == 0
    assert "jbod not measured at this point (1 devices" in got.loc["single", "latency_tax_note"]
    status, out, _ = analyze(capsys, results(tmp_path), "--reference", "jbod", "--metric", "p99")
    assert status == 0 and "p99 clat µs" in out.splitlines()[0] and "latency tax %" in out.splitlines()[0]


def test_a_table_without_latency_is_refused_by_name(tmp_path, capsys):
    frame = pd.read_csv(results(tmp_path)).drop(columns=["clat_p99_ns"])
    with pytest.raises(AnalysisError, match="no clat_p99_ns"):
        metrics.latency_at_best(frame, stats.summary_intervals(frame, "jbod"), "p99", "jbod")
    frame.to_csv(tmp_path / "no_latency.csv", index=False)
    status, _, err = analyze(capsys, tmp_path / "no_latency.csv", "--reference", "jbod", "--metric", "p99")
    assert status != 0 and "no clat_p99_ns" in err and "Traceback" not in err


def latency_table(rng: np.random.Generator, ratio: float, cv: float, runs: tuple[int, int]) -> pd.DataFrame:
    """A layout and its reference at one point: bandwidth alike, p99 lognormal of spread ``cv``, the layout's
    ``ratio`` times the reference's (mean 1 ms)."""
    rows = []
    for layout, n, scale in (("md0", runs[0], ratio), ("jbod", runs[1], 1.0)):
        sigma = np.sqrt(np.log1p(cv ** 2))
        p99 = scale * 1e6 * rng.lognormal(-sigma ** 2 / 2, sigma, n)
        rows += [{"layout": layout, "devices": 4, "rw": "randread", "bs": 4096, "numjobs": 4, "iodepth": 8,
                  "rep": rep, "bw_bytes": 1e9 * (1 + 0.01 * rep), "clat_p99_ns": value}
                 for rep, value in enumerate(p99)]
    return pd.DataFrame(rows)


DRAWS = 600


def test_the_latency_tax_is_the_ratio_to_the_reference_and_its_interval_covers_as_promised():
    """The latency tax's 95% interval (``stats.ratio_interval`` of the two sides' runs, minus one) held the true tax
    (+20%) in 96.3% of 600 tables of 3 and 5 runs, cv 10% and 3%, unequal sides (claimed 95%)."""
    rng = np.random.default_rng(52)
    summary = pd.DataFrame({"layout": ["md0", "jbod"], "devices": 4, "rw": "randread", "best_bs": 4096,
                            "best_numjobs": 4, "best_iodepth": 8})  # both best at the one point measured
    held = []
    for draw in range(DRAWS):
        runs, cv = ((3, 5), 0.10) if draw % 2 else ((5, 3), 0.03)
        frame = latency_table(rng, 1.2, cv, runs)
        said = metrics.latency_at_best(frame, summary, "p99", "jbod").set_index("layout")
        mine, other = frame[frame.layout == "md0"].clat_p99_ns.mean(), frame[frame.layout == "jbod"].clat_p99_ns.mean()
        assert said.loc["md0", "latency_tax"] == pytest.approx(mine / other - 1, rel=1e-12)
        held.append(said.loc["md0", "latency_tax_lo"] <= 0.2 <= said.loc["md0", "latency_tax_hi"])
    print(f"latency tax interval held the truth in {np.mean(held):.1%} of {DRAWS}")
    assert 0.93 <= np.mean(held) <= 0.97, np.mean(held)
