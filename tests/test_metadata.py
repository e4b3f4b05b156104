"""Metadata jobs (fio's filecreate, filestat and filedelete engines): how they are rendered and swept, what fio
reports for them (golden JSON produced by real fio, tests/golden/make_golden.py), what they do on disk (real fio
on plain directories), and the analysis of ``flashscale.metadata``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from flashscale.measure import fio, fio_output, raw
from flashscale.analysis import findings, metadata
from flashscale.publish import records
from flashscale.system.commands import Runner
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure.sweep import Sweep

GOLDEN = Path(__file__).parent / "golden"
ENGINES = ("filecreate", "filestat", "filedelete")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def golden(engine: str) -> dict:
    return fio_output.load_output((GOLDEN / f"metadata_{engine}.json").read_text())


def test_a_metadata_job_runs_the_engine_once_over_nrfiles_files_per_job():
    text = fio.render(fio.FioJob("filecreate", 4096, ("/m/0", "/m/1"), numjobs=3, nrfiles=100, runtime_s=5,
                                 ramp_s=2))
    for line in ("ioengine=filecreate", "rw=write", "nrfiles=100", "filesize=4096", "size=409600", "time_based=0",
                 "openfiles=1", "file_service_type=sequential", "create_on_open=1", "unlink=1"):
        assert f"\n{line}\n" in text
    assert "runtime=" not in text and "ramp_time=" not in text  # fio runs until every file is done
    assert "[flashscale-t0]\nnumjobs=2\ndirectory=/m/0\n" in text
    stat = fio.render(fio.FioJob("filestat", 512, ("/m",), nrfiles=7))
    assert "\nrw=read\n" in stat and "\nioengine=filestat\n" in stat and "\nunlink=1\n" in stat
    assert "create_on_open" not in stat
    assert "\nunlink=0\n" in fio.render(fio.FioJob("filedelete", 4096, ("/m",), nrfiles=7))
    assert fio.FioJob("filedelete", 4096, ("/m",), numjobs=2, nrfiles=7).point == "filedelete-bs4096-nj2-qd1-files7"


@pytest.mark.parametrize("kwargs,named", [
    (dict(rw="filecreate", nrfiles=0), "needs nrfiles >= 1"),
    (dict(rw="read", nrfiles=10), "only it takes nrfiles"),
    (dict(rw="filestat", nrfiles=-1), "nrfiles=-1"),
    (dict(rw="filedelete", nrfiles=True), "nrfiles=True"),
    (dict(rw="filecreate", nrfiles=10, shared_file=True), "cannot share one file"),
    (dict(rw="mkdir"), "'mkdir' is not one of"),
    (dict(rw="read", time_based=1), "time_based=1 must be True or False"),
])
def test_bad_metadata_jobs_are_named(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        fio.FioJob(bs=4096, targets=("/m",), **kwargs)


def test_a_metadata_sweep_has_nrfiles_as_its_fifth_axis():
    sweep = Sweep(rw=("filecreate", "filestat", "filedelete"), bs=(4096,), numjobs=(1, 2), nrfiles=(10, 100))
    points = sweep.points()
    assert len(points) == 3 * 1 * 2 * 1 * 2
    assert points[0] == {"rw": "filecreate", "bs": 4096, "numjobs": 1, "iodepth": 1, "nrfiles": 10}
    job = sweep.job(points[-1], ("/m",))
    assert (job.rw, job.numjobs, job.nrfiles) == ("filedelete", 2, 100)
    assert "nrfiles" not in Sweep().points()[0]  # a data sweep keeps its four axes


@pytest.mark.parametrize("kwargs,named", [
    (dict(rw=("filecreate",)), "nrfiles must list"),
    (dict(rw=("filecreate", "read"), nrfiles=(10,)), "mixes metadata engines"),
    (dict(rw=("read",), nrfiles=(10,)), "applies to the metadata engines"),
    (dict(rw=("filestat",), nrfiles=(0,)), "nrfiles value 0"),
    (dict(rw=("filestat",), nrfiles=(10,), shared_file=True), "cannot share one file"),
    (dict(time_based="no"), "time_based='no'"),
])
def test_bad_metadata_sweeps_are_named(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        Sweep(**kwargs)


@pytest.mark.parametrize("engine", ENGINES)
def test_fio_counts_one_operation_per_file_in_the_direction_of_rw(engine):
    data = golden(engine)
    side = fio_output.METADATA_OPS[engine]
    other = "read" if side == "write" else "write"
    job = data["jobs"][0]
    assert data["global options"]["ioengine"] == engine and len(data["jobs"]) == 1
    assert job[side]["total_ios"] == 600 == job[side]["clat_ns"]["N"]  # 3 jobs x 200 files
    assert job[other]["total_ios"] == 0 and job[side]["lat_ns"]["N"] == 0
    assert job[side]["io_bytes"] == 600 * 4096  # accounted, not moved
    assert job[side]["iops"] == pytest.approx(600 / (job[side]["runtime"] / 1000), rel=1e-6)
    numbers = metadata.from_fio(data)
    assert numbers["engine"] == engine and numbers["ops"] == numbers["latency_samples"] == 600
    assert numbers["rate"] == job[side]["iops"] and numbers["runtime_ms"] == job[side]["runtime"]
    assert numbers["clat_mean_ns"] == job[side]["clat_ns"]["mean"] > 0
    assert numbers["resolution"] == 1 / job[side]["runtime"]
    row = fio_output.parse(data)
    assert row["iops"] == pytest.approx(numbers["rate"]) and row["io_bytes"] == 600 * 4096


def _run(job: fio.FioJob, where: Path) -> dict:
    data = fio.run(job, where, Runner())
    return metadata.from_fio(data)


@needs_fio
def test_real_fio_creates_stats_and_removes_exactly_nrfiles_per_job(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    keep = (("unlink", "0"),)  # keep the files, to count them on disk
    kwargs = dict(targets=(str(a), str(b)), numjobs=3, nrfiles=40, direct=False)
    created = _run(fio.FioJob("filecreate", 4096, extra=keep, **kwargs), tmp_path / "create")
    names = sorted(p.name for p in (*a.iterdir(), *b.iterdir()))
    assert created["ops"] == created["latency_samples"] == len(names) == 120
    assert names[0] == "flashscale-t0.0.0" and {p.stat().st_size for p in a.iterdir()} == {0}  # empty files
    statted = _run(fio.FioJob("filestat", 4096, extra=keep, **kwargs), tmp_path / "stat")
    assert statted["ops"] == 120 and len(list(a.iterdir())) == 80 and len(list(b.iterdir())) == 40
    removed = _run(fio.FioJob("filedelete", 4096, **kwargs), tmp_path / "remove")
    assert removed["ops"] == 120 and not list(a.iterdir()) and not list(b.iterdir())
    again = _run(fio.FioJob("filecreate", 4096, **kwargs), tmp_path / "again")  # as the campaign runs it
    assert again["ops"] == 120 and not list(a.iterdir()) and not list(b.iterdir())  # unlink=1: nothing left


def _campaign(tmp_path: Path, runs: dict[str, dict]) -> pd.DataFrame:
    """A campaign directory whose raw runs hold the given fio outputs; its table."""
    rows = []
    for engine, data in runs.items():
        run_dir = Path("raw") / "single" / engine / "rep0"
        (tmp_path / run_dir).mkdir(parents=True)
        (tmp_path / run_dir / "fio.json").write_text(json.dumps(data))
        rows.append({"layout": "single", "devices": 1, "rw": engine, "bs": 4096, "numjobs": 3, "iodepth": 1,
                     "nrfiles": 200, "rep": 0, "warmup": False, "bw_bytes": 1.0, "raw_dir": str(run_dir)})
    return pd.DataFrame(rows)


def test_details_and_the_rate_table_from_a_campaigns_raw_runs(tmp_path):
    table = _campaign(tmp_path, {engine: golden(engine) for engine in ENGINES})
    rows = metadata.details(raw.fio_outputs(tmp_path, table))
    assert list(rows["op"]) == ["create", "stat", "remove"] and rows["complete"].all()
    assert set(rows["files"]) == {600}
    points = metadata.by_files(rows)
    wide = metadata.rate_table(points)
    assert list(wide.columns) == ["create", "stat", "remove"]
    assert wide.iloc[0]["stat"] == golden("filestat")["jobs"][0]["read"]["iops"]
    said = findings.metadata_sentences(points)
    assert "Every run operated on exactly its files" in " ".join(said)
    assert any(s.startswith("With 600 files, removes run") for s in said)
    numbers = records.metadata(SimpleNamespace(backend="directory", notes=[]), rows, ["create"], points)
    assert numbers["complete"] == {f"single/{op}/nj3/600": True for op in ("create", "stat", "remove")}
    assert set(numbers["headline"]) == {f"{op}s/s (600 files)" for op in ("create", "stat", "remove")}
    json.dumps(numbers)  # plain JSON for report.record


def test_a_run_that_missed_files_or_came_from_another_engine_is_named(tmp_path):
    short = golden("filecreate")
    short["jobs"][0]["write"]["total_ios"] = 599
    rows = metadata.details(raw.fio_outputs(tmp_path, _campaign(tmp_path, {"filecreate": short})))
    assert not rows["complete"].iloc[0]
    assert "1 point(s) did not count nrfiles x numjobs operations: create 600" in " ".join(
        findings.metadata_sentences(metadata.by_files(rows)))
    table = _campaign(tmp_path / "other", {"filestat": golden("filedelete")})
    with pytest.raises(AnalysisError, match="run by ioengine 'filedelete', not 'filestat'"):
        metadata.details(raw.fio_outputs(tmp_path / "other", table))


def test_short_runs_are_called_coarse_and_ops_are_checked():
    points = pd.DataFrame([{"layout": "single", "devices": 1, "op": "stat", "numjobs": 1, "nrfiles": 100,
                            "files": 100, "rate": 50_000.0, "latency_rate": 100_000.0, "complete": True,
                            "runtime_ms": 2.0, "resolution": 0.5}])
    said = findings.metadata_sentences(points)
    assert "1 point(s) ran for under 50 ms" in said[-1] and "stat 100 files in 2 ms" in said[-1]
    assert "takes 50% to 50% of the time per file" in " ".join(said)
    assert metadata.sweep_fields(["create", "remove"], [10]) == {"rw": ("filecreate", "filedelete"),
                                                                  "nrfiles": (10,)}
    with pytest.raises(ConfigError, match=r"ops \['mkdir'\]"):
        metadata.sweep_fields(["create", "mkdir"], [10])
