"""The sampler's arithmetic on a fake /proc (iostat -x's definitions), and the verdicts the analysis draws."""
from __future__ import annotations

import time

import pandas as pd
import pytest

from flashscale.analysis import findings, monitor as analysis
from flashscale.publish import plots
from flashscale.system import monitor
from flashscale.system.devices import System

# reads merged sectors ms | writes merged sectors ms | inflight io_ticks weighted | discards... (17 fields in all)
BEFORE = "7 3 loop3 100 0 8000 50 200 0 16000 100 0 1000 3000 0 0 0 0 0 0"
AFTER = "7 3 loop3 300 0 408000 150 600 0 2016000 400 2 1900 4800 0 0 0 0 0 0"
CPU_BEFORE = "cpu 100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\n"
CPU_AFTER = "cpu 200 0 100 850 50 0 0 0 0 0\ncpu0 150 0 50 400 25 0 0 0 0 0\ncpu1 50 0 50 450 25 0 0 0 0 0\n"


def fake_proc(tmp_path, disk: str, cpu: str) -> System:
    (tmp_path / "diskstats").write_text(disk + "\n")
    (tmp_path / "stat").write_text(cpu + "intr 0\n")
    return System(proc=tmp_path, sys=tmp_path / "sys")


def test_rates_are_iostat_x_over_the_elapsed_time(tmp_path):
    before = fake_proc(tmp_path, BEFORE, CPU_BEFORE).diskstats()["loop3"]
    after = fake_proc(tmp_path, AFTER, CPU_AFTER).diskstats()["loop3"]
    rates = monitor.device_rates(before, after, elapsed_s=2.0)
    assert rates["read_bw_bytes"] == pytest.approx(400000 * 512 / 2) and rates["write_bw_bytes"] == pytest.approx(2000000 * 512 / 2)
    assert rates["read_iops"] == 100 and rates["write_iops"] == 200
    assert rates["avg_request_bytes"] == pytest.approx(2400000 * 512 / 600)
    assert rates["util"] == pytest.approx(0.45)       # 900 ms of io_ticks in 2000 ms
    assert rates["queue_depth"] == pytest.approx(0.9)  # 1800 weighted ms in 2000 ms


def test_cpu_shares_and_the_busiest_cpu(tmp_path):
    before = fake_proc(tmp_path, BEFORE, CPU_BEFORE).cpu_times()
    after = fake_proc(tmp_path, AFTER, CPU_AFTER).cpu_times()
    shares = monitor.cpu_shares(before, after)
    assert shares == {"cpu_user": 0.5, "cpu_system": 0.25, "cpu_iowait": 0.0, "cpu_idle": 0.25, "cpu_busiest": 1.0}


def test_a_run_shorter_than_an_interval_still_has_a_row_per_device(tmp_path):
    system = fake_proc(tmp_path, BEFORE, CPU_BEFORE)
    with monitor.Sampler(["loop3", "gone"], system, interval_s=60) as sampler:
        time.sleep(0.05)
    assert [row["device"] for row in sampler.rows] == ["loop3"]
    assert 0 < sampler.rows[0]["interval_s"] < 1 and sampler.rows[0]["util"] == 0
    with monitor.Sampler([], system, interval_s=60) as sampler:
        time.sleep(0.01)
    assert sampler.rows[0]["device"] is None and "cpu_idle" in sampler.rows[0]


def table(loads: dict[str, float], cpu: float = 0.3, cap: float = 2e8) -> pd.DataFrame:
    rows = [{"layout": "jbod", "workload": "fio", "point": "p", "rep": 0, "device": name, "t_s": t, "util": 0.1,
             "read_bw_bytes": 0.0, "write_bw_bytes": share * cap, "queue_depth": 1.0, "cpu_busiest": cpu}
            for name, share in loads.items() for t in (1, 2, 3)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("loads, cpu, expected", [
    ({"loop1": 1.0, "loop2": 0.97}, 0.3, "devices"),
    ({"loop1": 1.0, "loop2": 0.05}, 0.3, "uneven"),
    ({"loop1": 0.4, "loop2": 0.4}, 1.0, "cpu"),
    ({"loop1": 0.4, "loop2": 0.4}, 0.3, "neither"),
])
def test_the_verdict_says_what_limited_the_run(loads, cpu, expected):
    verdicts = analysis.bottlenecks(table(loads, cpu), caps={"write": 2e8})
    assert verdicts["verdict"].tolist() == [expected]


def test_without_the_cap_the_load_is_the_utilisation_alone():
    frame = table({"loop1": 1.0, "loop2": 1.0})
    assert analysis.bottlenecks(frame)["verdict"].tolist() == ["neither"]  # util 0.1: the throttle held the I/O
    assert analysis.device_sum(frame)["devices_write_bw_bytes"].tolist() == [4e8]


def test_a_sentence_and_a_figure_per_layout():
    frame = pd.concat([table({"loop1": 1.0, "loop2": 1.0}).assign(layout="jbod", raw_dir="a"),
                       table({"loop1": 1.0, "loop2": 0.0}).assign(layout="single", raw_dir="b")])
    verdicts = analysis.bottlenecks(frame, caps={"write": 2e8})
    sentences = findings.bottleneck_sentences(verdicts)
    assert sentences[0].startswith("jbod, fio: in its run, every device was saturated")
    assert "others idled" in sentences[1]
    fig = plots.device_load(frame, caps={"write": 2e8})
    assert [axis.get_title() for axis in fig.axes] == ["jbod: fio", "single: fio"]


def test_busy_cores_is_the_busy_share_of_all_cpus_times_their_count(tmp_path):
    before = fake_proc(tmp_path, BEFORE, CPU_BEFORE).cpu_times()
    after = fake_proc(tmp_path, AFTER, CPU_AFTER).cpu_times()
    # 100 user + 50 system of 200 jiffies on 2 CPUs (iowait and idle are not busy)
    assert monitor.busy_cores(before, after) == pytest.approx(1.5)
    # irq, softirq and steal are busy too; iowait and idle are not: 4 CPUs, 100 busy jiffies of 200
    cpus = "".join(f"cpu{i} 0 0 0 0 0 0 0 0 0 0\n" for i in range(4))
    first = fake_proc(tmp_path, BEFORE, "cpu 0 0 0 0 0 0 0 0 0 0\n" + cpus).cpu_times()
    second = fake_proc(tmp_path, BEFORE, "cpu 40 10 20 50 30 10 10 30 0 0\n" + cpus).cpu_times()
    assert monitor.busy_cores(first, second) == pytest.approx(120 / 200 * 4)
    assert monitor.busy_cores(first, first) != monitor.busy_cores(first, first)  # no time passed: NaN
