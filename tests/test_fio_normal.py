"""fio's normal (human) output read as its JSON is: real fio 3.33 wrote each run both ways at once
(``--output-format=normal,json``, tests/golden/imported/fio333_*_normal_json.txt), so the two readings of one run
must give the same rows; fio 2.0.10's layout from a seed study's own log (seed 004: a Micron P320h, fio 2.0.10).
The normal output of 20 fio releases, each held to fio's own JSON of the same run: tests/test_fio_history.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.errors import FioError
from flashscale.measure.fio_import import normal
from flashscale.measure import results

IMPORTED = Path(__file__).parent / "golden" / "imported"
RUNS = ("groups", "grouped", "randrw")

# Seed 004's fio 2.0.10 log (its Table 2), the lines as fio printed them: one job, 512 B random reads
FIO_2_0_10 = """w: (g=0): rw=randread, bs=512-512/512-512, ioengine=libaio, iodepth=1
fio 2.0.10
Starting 1 process

w: (groupid=0, jobs=1): err= 0: pid=23423: Thu Dec  6 09:18:04 2012
  read : io=203360KB, bw=10577KB/s, iops=21153 , runt= 19227msec
    slat (usec): min=2 , max=28 , avg= 2.61, stdev= 0.59
    clat (usec): min=19 , max=276 , avg=43.81, stdev= 1.22
     lat (usec): min=22 , max=279 , avg=46.54, stdev= 1.27
    clat percentiles (usec):
     |  1.00th=[   42],  5.00th=[   42], 10.00th=[   43], 20.00th=[   43],
     | 99.00th=[   47], 99.50th=[   48], 99.90th=[   56], 99.95th=[   59],
     | 99.99th=[  169]
    bw (KB/s)  : min= 9932, max=10696, per=100.00%, avg=10578.43, stdev=134.45
    lat (usec) : 20=0.01%, 50=99.96%, 100=0.02%, 250=0.01%, 500=0.01%
  cpu          : usr=4.69%, sys=11.92%, ctx=406702, majf=0, minf=24
  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued    : total=r=406720/w=0/d=0, short=r=0/w=0/d=0

Run status group 0 (all jobs):
   READ: io=203360KB, aggrb=10576KB/s, minb=10576KB/s, maxb=10576KB/s, mint=19227msec, maxt=19227msec

Disk stats (read/write):
  rssda: ios=405456/0, merge=0/0, ticks=16920/0, in_queue=16848, util=88.15%
"""


def _split(name: str) -> tuple[str, str]:
    """One golden run as fio wrote it both ways: (its normal text, its JSON)."""
    text = (IMPORTED / f"fio333_{name}_normal_json.txt").read_text()
    json_text = re.search(r"(?ms)^\{\n.*?^\}\n", text).group(0)
    return text.replace(json_text, ""), json_text


def _imported(tmp_path: Path, name: str, text: str) -> "results.pd.DataFrame":
    source = tmp_path / f"{name}.txt"
    source.write_text(text)
    out = tmp_path / f"out-{name}"
    assert cli.main(["import", str(source), "--to", str(out), "--layout", "single", "--devices", "1"]) == 0
    return results.load(out).sort_values("point").reset_index(drop=True)


@pytest.mark.parametrize("name", RUNS)
def test_normal_output_gives_the_rows_fio_s_json_of_the_same_run_gives(tmp_path, name):
    """Bandwidth to the byte (issued I/Os x bs over runt, as fio computes bw_bytes), what ran from the description
    lines, latency within fio's printed rounding; direct, which normal output does not say, unknown."""
    text, json_text = _split(name)
    assert "{" not in text.splitlines()[0] and normal.is_normal(text)
    rows, truth = _imported(tmp_path, f"{name}-normal", text), _imported(tmp_path, f"{name}-json", json_text)
    assert list(rows["point"]) == list(truth["point"]) and len(rows) >= 1
    for column in ("bw_bytes", "read_bw_bytes", "write_bw_bytes", "numjobs", "bs", "iodepth", "rw", "ioengine"):
        assert list(rows[column]) == list(truth[column]), column
    assert rows["iops"].to_numpy() == pytest.approx(truth["iops"].to_numpy(), rel=5e-3)  # 18.2k: 3 figures
    assert rows["clat_mean_ns"].to_numpy() == pytest.approx(truth["clat_mean_ns"].to_numpy(), rel=1e-3, abs=10)
    assert rows["direct"].isna().all() and (truth["direct"] == 0).all()
    assert (rows["source_format"] == "normal").all() and (rows["fio_version"] == "fio-3.33").all()
    assert rows["fio_time"].str[:19].tolist() == truth["fio_time"].str[:19].tolist()  # this machine's zone is UTC
    for p99, exact in zip(rows["clat_p99_ns"], truth["clat_p99_ns"]):
        assert (p99 != p99 and exact != exact) or abs(p99 - exact) <= 1000  # printed in whole usec


def test_fio_2_0_10_normal_output_is_read_with_kb_as_1024_bytes(tmp_path):
    """fio 2.0.10's layout: ``io=203360KB ... runt= 19227msec`` and ``issued: total=r=406720``: 406,720 reads of
    512 B in 19.227 s, the bandwidth fio printed (10577 KB/s, KB = 1024 bytes)."""
    (run,) = normal.read_normal(FIO_2_0_10, "seed004")
    (job,) = run["jobs"]
    assert run["fio version"] == "fio-2.0.10" and job["_described"]["rw"] == "randread"
    assert job["read"]["io_bytes"] == 406720 * 512 == 203360 * 1024
    assert job["read"]["bw_bytes"] == 1000 * 406720 * 512 // 19227
    assert round(job["read"]["bw_bytes"] / 1024) == 10577
    assert job["read"]["clat_ns"]["mean"] == pytest.approx(43810) and job["read"]["lat_ns"]["mean"] == 46540
    assert job["read"]["clat_ns"]["percentile"]["99.990000"] == 169000
    rows = _imported(tmp_path, "seed004", FIO_2_0_10)
    assert rows[["rw", "bs", "iodepth", "numjobs", "ioengine"]].iloc[0].tolist() == ["randread", 512, 1, 1, "libaio"]
    assert rows["fio_time"].iloc[0] == "2012-12-06T09:18:04"


def test_runs_appended_to_one_normal_file_are_each_read_and_a_failed_job_is_a_failed_row(tmp_path, capsys):
    text, _ = _split("randrw")
    failed = FIO_2_0_10.replace("err= 0: pid=23423", "err= 5 (file:io_u.c:1896, func=io_u error, error=Input/output "
                                "error): pid=23423")
    rows = _imported(tmp_path, "two", text + FIO_2_0_10 + failed)
    assert sorted(rows["source_output"]) == [0, 1, 2]
    assert sorted(rows["status"]) == ["failed", "ok", "ok"]
    assert "fio reported error 5 (Input/output error)" in rows.loc[rows["status"] == "failed", "error"].iloc[0]
    assert "3 fio outputs in one file: 3 runs" in capsys.readouterr().err


def test_text_without_a_job_block_is_not_normal_output():
    with pytest.raises(FioError, match="no job block"):
        normal.read_normal("Run status group 0 (all jobs):\n   READ: bw=1MiB/s\n", "x")
    assert not normal.is_normal("hello\n")


def test_a_client_s_normal_output_of_two_servers_is_one_row_of_both_and_says_so(tmp_path, capsys):
    """fio 3.33 as a client of two fio servers (2 jobs each): their blocks name no host, so the group is one row of
    the 4 jobs; fio's own "All clients" block is not added to them, and its bandwidth agrees with theirs summed."""
    name = IMPORTED / "fio333_client_2servers_normal.txt"
    text = name.read_text()
    rows = _imported(tmp_path, "client", text)
    assert len(rows) == 1 and rows["numjobs"].iloc[0] == 4 and rows["rw"].iloc[0] == "randread"
    assert "client/server normal output of 2 hosts" in capsys.readouterr().err
    clients = re.search(r"All clients: .*\n\s+read: IOPS=\S+, BW=\S+ \((?P<si>[\d.]+)M\)", text)
    assert rows["bw_bytes"].iloc[0] == pytest.approx(float(clients["si"]) * 1e6, rel=2e-3)  # 293M: 3 figures
