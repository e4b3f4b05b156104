"""Every kind of row on a layout (a sweep's run, a failed run, a user's job file's group, an application's metric)
takes the columns they share from one place, ``Recorder.header``; each kind keeps exactly its own columns."""
from __future__ import annotations

import copy
import math
import tempfile
from pathlib import Path

import pytest
from tqdm import tqdm

from flashscale.arrays.layouts import Layout
from flashscale.errors import FioError
from flashscale.measure import campaign_folder, fio, fio_output, jobrun
from flashscale.measure.recorder import Recorder
from flashscale.measure.sweep import Sweep
from flashscale.measure.workloads import common

GOLDEN = Path(__file__).parent / "golden"
CAPS = {"read": 1e8, "randread": 1e8, "write": 5e7, "randwrite": 5e7}
CGROUP = [Path("/sys/fs/cgroup/flashscale-test/cgroup.procs")]  # never opened: fio.run is replaced
HEADER = {"campaign", "host", "layout", "devices", "run_id", "backend", "cap_bps", "cap_asked_bps", "harness_bw_bytes",
          "warmup", "phase", "round", "build"}
# Each kind's columns, as the rows were written before their header came from one place.
FIO_NUMBERS = {"bw_bytes", "iops", "runtime_s", "clat_mean_ns", "clat_p50_ns", "clat_p99_ns", "clat_p999_ns",
               "clat_p9999_ns", "clat_stddev_ns", "lat_mean_ns", "read_bw_bytes", "write_bw_bytes", "io_bytes"}
EVIDENCE = {"truth_bw_bytes", "above_truth", "too_short"}
FIO_CPU = {"fio_usr_cpu", "fio_sys_cpu"}  # fio's own CPU time; a sweep's run adds the machine's, cpu_busy_cores
RATE_LOG = {"rate_seconds", "stall_s", "rate_low", "rate_low_at_s"}  # a sweep's run: what its bandwidth log shows
MEASURED = HEADER | FIO_NUMBERS | EVIDENCE | FIO_CPU | RATE_LOG | {"cpu_busy_cores", "cpu_latency_us", "rw", "bs", "numjobs", "iodepth", "rep", "fio_version", "ss_attained",
                                              "ss", "ss_criterion", "point", "raw_dir", "started_at", "adaptive",
                                              "status", "steady", "steady_round"}
FAILED = HEADER | FIO_NUMBERS | EVIDENCE | {"rw", "bs", "numjobs", "iodepth", "rep", "point", "raw_dir",
                                            "started_at", "status", "error", "adaptive"}
GROUP = HEADER | FIO_NUMBERS | EVIDENCE | FIO_CPU | {"workload", "group", "rw", "bs", "numjobs", "iodepth", "point",
                                           "fio_version", "ss_attained", "ss", "ss_criterion", "job_file",
                                           "job_file_sha256", "rep", "raw_dir", "started_at", "steady",
                                           "steady_round"}
METRIC = HEADER | {"workload", "rw", "bs", "numjobs", "iodepth", "rep", "bw_bytes", "iops", "runtime_s", "point",
                   "raw_dir", "started_at", "status", "metric", "value", "unit", "missing_reason", "file_bytes"}


def same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@pytest.fixture
def kinds(tmp_path, monkeypatch):
    """``make()``: one row of each kind on the same layout, fio run inside the throttled cgroup (fio.run replaced:
    real fio output, then a failure); returns (recorder, layout, rows by kind)."""
    output = fio_output.load_output((GOLDEN / "write_1target.json").read_text())
    outcomes = iter([])

    def fake_run(job, outdir, runner, *, cgroup_procs=()):
        Path(outdir).mkdir(parents=True)
        if next(outcomes) == "fail":
            raise FioError("fio exited with status 1 (flashscale-t0: error 28): No space left on device")
        return copy.deepcopy(output)
    monkeypatch.setattr(fio, "run", fake_run)
    layout = Layout("jbod", 2, (str(tmp_path / "m0"), str(tmp_path / "m1")), "directory", "two directories")

    def make():
        nonlocal outcomes
        outcomes = iter(["ok", "fail"])
        directory = Path(tempfile.mkdtemp(dir=tmp_path))
        recorder = Recorder("c", "hostA", Sweep(rw=["write"], numjobs=[2], repetitions=1), directory, None, "run1",
                            CAPS, tqdm(disable=True), {})
        job = recorder.sweep_spec.job(recorder.sweep_spec.points()[0], layout.targets)
        recorder._record(layout, job, Path("raw/jbod/p/rep0"), CGROUP)
        recorder._record(layout, job, Path("raw/jbod/p/rep1"), CGROUP)
        measured, failed = campaign_folder.read_rows(directory)[0]
        group = {"group": "scan", "rw": "read", "bs": 4096, "numjobs": 2, "iodepth": 1, "point": "jobfile-scan",
                 **fio_output.parse(output), "job_file": "/x/job.fio", "job_file_sha256": "0" * 64, "rep": 0,
                 "raw_dir": "raw/jbod/jobfile-as-written/rep0", "started_at": "2024-01-01T00:00:00+00:00"}
        grouped = jobrun.layout_row(recorder, layout, group, CGROUP)
        metric = common.metric_row(recorder, layout, CGROUP, workload="bonnie++", metric="block_write", value=1e8,
                                   unit="bytes/s", raw=Path("raw/jbod/bonnie-p1/rep0"), point="p1", rep=0,
                                   numjobs=1, bs=2**20, runtime_s=3.0, started="2024-01-01T00:00:00+00:00",
                                   file_bytes=2**30)
        return recorder, layout, {"measured": measured, "failed": failed, "group": grouped, "metric": metric}
    return make


def test_each_kind_of_row_keeps_exactly_its_own_columns(kinds):
    _, _, rows = kinds()
    assert {kind: set(row) for kind, row in rows.items()} == {
        "measured": MEASURED, "failed": FAILED, "group": GROUP, "metric": METRIC}


def test_the_four_kinds_of_rows_share_the_header_of_the_same_layout(kinds):
    recorder, layout, rows = kinds()
    expected = {
        "measured": recorder.header(layout, rw="write", cgroup_procs=CGROUP),
        "failed": recorder.header(layout),  # a failed run measured nothing: no cap
        "group": recorder.header(layout, rw="read", cgroup_procs=CGROUP, phase="workload", workload="jobfile"),
        "metric": recorder.header(layout, phase="workload", workload="bonnie++"),  # a metric is no rw: no cap
    }
    for kind, row in rows.items():
        assert set(expected[kind]) - {"workload"} == HEADER, kind
        assert all(same(row[k], v) for k, v in expected[kind].items()), kind
    assert rows["measured"]["cap_bps"] == CAPS["write"] and rows["group"]["cap_bps"] == CAPS["read"]
    assert math.isnan(rows["failed"]["cap_bps"]) and math.isnan(rows["metric"]["cap_bps"])
    assert rows["measured"]["truth_bw_bytes"] == 2 * CAPS["write"] and math.isnan(rows["failed"]["truth_bw_bytes"])
    assert "workload" not in rows["measured"] and "workload" not in rows["failed"]  # read as fio (results.DEFAULTS)


def test_a_column_added_to_the_header_reaches_every_kind_of_row(kinds, monkeypatch):
    original = Recorder.header
    monkeypatch.setattr(Recorder, "header", lambda self, *a, **k: {**original(self, *a, **k), "rack": "r7"})
    _, _, rows = kinds()
    assert {kind: row["rack"] for kind, row in rows.items()} == dict.fromkeys(rows, "r7")
