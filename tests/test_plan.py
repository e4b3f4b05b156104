"""`flashscale plan`: rates with their units, the fewest devices that reach a target, and seed 001's question
(how many NVMe devices for 100 Gb/s) answered from a measured P3700 baseline."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from flashscale import cli
from flashscale.analysis.prediction import predict, sizing
from flashscale.cli.plan import parse_rate
from flashscale.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "data" / "reference"
SEED000 = REFERENCE / "seed000_results.csv"
GOLDEN = ROOT / "tests" / "golden" / "quickstart_results.csv"


def plan(capsys, *args) -> tuple[int, str, str]:
    status = cli.main(["plan", *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("text, value", [
    ("12.5GB/s", 12.5e9), ("100Gb/s", 12.5e9), ("100Gbit/s", 12.5e9), ("3GiB/s", 3 * 2 ** 30),
    ("800MB/s", 800e6), ("1.5e3MB/s", 1.5e9), ("400 MBps", 400e6), ("10 Gb/s", 1.25e9),
])
def test_rates_carry_their_unit(text, value):
    assert parse_rate(text, "--target") == pytest.approx(value)


@pytest.mark.parametrize("text", ["1.2", "12.5", "fast", "0GB/s", "12.5 GX/s", ""])
def test_a_rate_without_bytes_or_bits_is_refused_by_name(text):
    with pytest.raises(ConfigError, match=f"--target {text!r}"):
        parse_rate(text, "--target")


def test_seed001_how_many_p3700_for_100_gb_s(capsys):
    """Seed 001: 'eight Intel DC P3700 ... /cluster should be sufficient to get close to 100Gbps', two servers of
    four, an EDR (100 Gb/s) link each. From seed 000's measured P3700 (2.78 GB/s read, 2.05 write): reads need 5
    devices, writes 7, on two servers; the authors' 8 is the write answer rounded up to two full servers."""
    system = pd.read_csv(REFERENCE / "seed001_system.csv").set_index("parameter")["value"]
    status, out, _ = plan(capsys, SEED000, "--target", "100Gb/s", "--link-bps", "100Gb/s",
                          "--devices-per-host", int(system["devices_per_host"]), "--format", "csv")
    assert status == 0
    got = pd.read_csv(io.StringIO(out)).set_index("rw")
    assert got.loc["read", "devices"] == 5 and got.loc["write", "devices"] == 7  # ceil(12.5 / 2.78), ceil(12.5 / 2.05)
    assert got.loc["write", "hosts"] == system["hosts"]
    assert got.loc["write", "predicted_bw_bytes"] == pytest.approx(7 * 2.05e9)
    assert (got["predicted_limit"] == "devices").all() and got["target_bw_bytes"].eq(system["target_bw_bytes"]).all()
    # the authors' count: one device more than the writes need (-12.5%), and what 8 would give
    assert got["devices"].max() / system["devices"] - 1 == pytest.approx(-0.125)
    assert 8 * 2.05e9 >= system["target_bw_bytes"] > 6 * 2.05e9


def test_the_table_and_the_answer_in_words(capsys):
    status, out, _ = plan(capsys, SEED000, "--target", "100Gb/s", "--link-bps", "100Gb/s", "--devices-per-host", 4)
    assert status == 0
    assert "write: 7 devices on 2 hosts reach 12.5 GB/s (14.3 GB/s predicted for jbod, the devices binding)" in out
    assert "network limit" in out and "e+" not in out


def test_one_host_link_binds_first_and_a_target_beyond_it_is_never_reached(capsys):
    status, out, _ = plan(capsys, "--device-bps", "read=3.2GB/s,write=1.3GB/s", "--target", "13GB/s",
                          "--link-bps", "100Gb/s", "--max-devices", 16)
    assert status == 0
    assert "read: no count up to 16 devices reaches 13 GB/s: the network holds jbod at 12.5 GB/s, binding from 4 " \
           "devices on." in out  # 4 x 3.2 = 12.8 GB/s: the 12.5 GB/s link binds from 4
    assert "write: no count up to 16 devices reaches 13 GB/s: the network holds jbod at 12.5 GB/s, binding from 10 " \
           "devices on." in out  # 10 x 1.3 = 13 GB/s
    table, answers = sizing.sizing(predict.figures({"read": 3.2e9}), 12e9, predict.Ceilings(network_link_bw_bytes=12.5e9),
                                   max_devices=16)
    answer = answers.iloc[0]
    assert answer["devices"] == 4 and answer["other_limit"] == "network" and answer["other_limit_devices"] == 4


def test_seed003_shape_from_published_figures(capsys):
    """33 storage targets x 4 P4600 behind 11 links of 12.4 GB/s: the network binds from 43 drives for reads."""
    status, out, _ = plan(capsys, "--device-bps", "read=3.2GB/s,write=1.3GB/s", "--target", "132GB/s",
                          "--link-bps", "12.4GB/s", "--hosts", 11, "--max-devices", 132, "--format", "csv")
    assert status == 0
    got = pd.read_csv(io.StringIO(out)).set_index("rw")
    assert got.loc["read", "devices"] == 42 and got.loc["read", "other_limit_devices"] == 43  # 136.4 / 3.2 = 42.6
    assert got.loc["write", "devices"] == 102 and got.loc["write", "other_limit"] == "network"  # 132 / 1.3 = 101.5
    assert got.loc["read", "ceiling_bw_bytes"] == pytest.approx(136.4e9)


def test_a_measured_curve_gives_an_interval(capsys):
    """The golden quickstart's single device (200 MB/s cap, 3 runs a point): 5 devices predicted to reach 1 GB/s,
    6 at the low side of its interval."""
    status, out, _ = plan(capsys, GOLDEN, "--target", "1GB/s", "--rw", "read", "--max-devices", 8, "--format", "csv")
    assert status == 0
    got = pd.read_csv(io.StringIO(out)).iloc[0]
    assert got["devices"] == 5 and got["devices_lo"] == 6
    assert got["predicted_lo"] < 1e9 <= got["predicted_bw_bytes"] < got["predicted_hi"]


@pytest.mark.parametrize("args, message", [
    (["--target", "1GB/s"], "give the device's curve"),
    ([SEED000, "--device-bps", "1GB/s", "--target", "1GB/s"], "not both"),
    (["--device-bps", "1GB/s", "--target", "1.2"], "--target '1.2'"),
    (["--device-bps", "read=1GB/s,read=2GB/s", "--target", "1GB/s"], "each rw once"),
    ([SEED000, "--rw", "randread", "--target", "1GB/s"], "no 'randread' rows"),
    (["--device-bps", "1GB/s", "--target", "1GB/s", "--hosts", "2", "--devices-per-host", "4"], "not both"),
    (["--device-bps", "1GB/s", "--target", "1GB/s", "--cores", "-1"], "cores = -1"),
    (["--device-bps", "1GB/s", "--target", "1GB/s", "--max-devices", "0"], "max_devices = 0"),
])
def test_bad_input_exits_1_naming_the_value(capsys, args, message):
    status, _, err = plan(capsys, *args)
    assert status == 1 and message in err


def _ram_disks(single_bw: float, measured: dict[int, float] | None = None) -> pd.DataFrame:
    """A table of RAM disks: one device at one job (1 MiB reads), and jbod measured on more."""
    rows = [dict(layout="single", devices=1, rw="read", bs=2**20, numjobs=1, iodepth=1, rep=rep, bw_bytes=single_bw)
            for rep in range(2)]
    rows += [dict(layout="jbod", devices=n, rw="read", bs=2**20, numjobs=n, iodepth=1, rep=rep, bw_bytes=bw)
             for n, bw in (measured or {}).items() for rep in range(2)]
    return pd.DataFrame(rows)


def test_plan_never_answers_fewer_devices_than_the_table_measured_falling_short(tmp_path, capsys):
    """The table measured jbod on 4 RAM disks at 2.5 GB/s, short of 3 GB/s, where the model of 4 x 1 GB/s said 4
    GB/s: the old plan answered 3 devices. The table answers that 4 fall short, so the answer is above 4, the
    model held to the table's -37.5% there; and a target the table reached is answered by the table."""
    path = tmp_path / "ram.csv"
    _ram_disks(1e9, {4: 2.5e9}).to_csv(path, index=False)
    status, out, _ = plan(capsys, path, "--target", "3GB/s", "--max-devices", 16, "--format", "csv")
    assert status == 0
    got = pd.read_csv(io.StringIO(out)).iloc[0]
    assert got["devices"] == 5 and got["source"] == "held to the table on 4 devices (-37.5%)"
    assert got["predicted_bw_bytes"] == pytest.approx(5e9 * 0.625)
    status, out, _ = plan(capsys, path, "--target", "2.4GB/s", "--max-devices", 16)
    assert "read: 3 devices on 1 host reach 2,400 MB/s (2,500 MB/s predicted" in out  # no more than 4 measured
    assert "the table measured jbod read on 4 devices at 2,500 MB/s (bs 1048576, 4 jobs, iodepth 1), -37.5% against " \
           "the model's 4,000 MB/s" in out
    table, answers = sizing.sizing(predict.curve(_ram_disks(1e9, {4: 2.5e9})), 2.5e9, max_devices=16,
                                   table=_ram_disks(1e9, {4: 2.5e9}))
    assert answers.iloc[0]["devices"] == 3 and table.set_index("devices").loc[4, "source"] == "measured"
    assert sizing.sizing(predict.curve(_ram_disks(1e9, {4: 2.5e9})), 2.6e9, max_devices=16,
                         table=_ram_disks(1e9, {4: 2.5e9}))[1].iloc[0]["devices"] == 5


def test_without_a_ceiling_an_answer_beyond_the_evidence_is_given_and_flagged(tmp_path, capsys):
    """One RAM disk read 0.6 GB/s at one job; with no ceiling but the devices, 1.2 TB/s takes 2,000 disks, one job
    each. plan answers at any count --max-devices allows (it stopped at 4, whatever --max-devices said: issue 52),
    and flags the answer: nothing but the devices bounds it beyond 4 x the largest layout measured (one device
    here: 4), naming what would; the memory this machine measured holds it at its copy rate."""
    path = tmp_path / "ram.csv"
    _ram_disks(0.6e9).to_csv(path, index=False)
    status, out, _ = plan(capsys, path, "--target", "1.2TB/s", "--max-devices", 2048)
    assert status == 0
    assert "read: 2000 devices on 1 host reach 1,200 GB/s (1,200 GB/s predicted for jbod, the devices binding)" in out
    assert ("Nothing but the devices bounds the prediction as far as known: beyond 4 devices (4 x the largest layout "
            "measured, 1 device) it is an extrapolation, which a known memory, network, uplink or CPU ceiling would "
            "bound (--memory-bps") in out
    status, out, _ = plan(capsys, path, "--target", "1.2TB/s", "--max-devices", 2048, "--format", "json")
    got = json.loads(out)[0]
    assert got["devices"] == 2000 and got["extrapolated"] is True and got["max_devices"] == 2048
    status, out, _ = plan(capsys, path, "--target", "2GB/s", "--format", "json")  # 4 disks, within the evidence
    got = json.loads(out)[0]
    assert got["devices"] == 4 and got["extrapolated"] is False and got["reach"].startswith("nothing but the devices")


def test_issue_52_a_datasheet_rate_is_answered_at_any_count_max_devices_allows(capsys):
    """plan --device-bps 2.8GB/s --target 100Gb/s stopped at 4 devices, --max-devices 64 changing nothing: 5 devices
    reach it (14 GB/s); where --max-devices stops the counts short of it, plan says so and that the devices still
    grow there."""
    status, out, _ = plan(capsys, "--device-bps", "2.8GB/s", "--target", "100Gb/s", "--max-devices", 64)
    assert status == 0
    assert "read: 5 devices on 1 host reach 12.5 GB/s (14 GB/s predicted for jbod, the devices binding)" in out
    assert "no limit but the devices binds up to 64 devices." in out and "an extrapolation" in out
    status, out, _ = plan(capsys, "--device-bps", "2.8GB/s", "--target", "100Gb/s", "--max-devices", 4)
    assert ("read: no count up to 4 devices reaches 12.5 GB/s: the devices still bind there, jbod at 11.2 GB/s and "
            "growing with each device: --max-devices 4 stops the counts; raise it.") in out
    status, out, _ = plan(capsys, "--device-bps", "2.8GB/s", "--target", "100Gb/s", "--memory-bps", "12GB/s",
                          "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).iloc[0]  # a shared ceiling known: nothing extrapolated, and it binds from 5
    assert pd.isna(got["devices"]) and got["ceiling_limit"] == "memory" and got["ceiling_from"] == 5
    assert not got["extrapolated"] and pd.isna(got["reach"])


def test_a_shared_ceiling_holds_the_ram_disks_at_the_memory_s_rate(tmp_path, capsys):
    """The same RAM disk with the memory's 18 GB/s known: no count up to 2,048 reaches 1.2 TB/s, and the memory
    binds from 31 disks (30 x 0.6 GB/s is 18 GB/s: a tie)."""
    path = tmp_path / "ram.csv"
    _ram_disks(0.6e9).to_csv(path, index=False)
    status, out, _ = plan(capsys, path, "--target", "1.2TB/s", "--max-devices", 2048, "--memory-bps", "18GB/s",
                          "--format", "csv")
    got = pd.read_csv(io.StringIO(out)).iloc[0]
    assert pd.isna(got["devices"]) and got["ceiling_limit"] == "memory" and got["ceiling_bw_bytes"] == pytest.approx(18e9)
    assert got["max_devices"] == 2048 and got["other_limit_devices"] == 31  # 30 x 0.6 GB/s = 18 GB/s: a tie


def test_a_stripe_s_chunk_comes_from_the_user_or_the_layout_s_own_rows(tmp_path, capsys):
    """4 KiB random reads of a device that reads 100 MB/s at one in flight (and no more at two, as far as it was
    measured); plan gives N devices N jobs at iodepth 1. Where each request fits a chunk (--chunk-bytes, or the
    layout's own rows' chunk_bytes, an imported run's) the N requests land on the members at random: on 2 they share
    one half of the time, 133 MB/s (the closed network's 2 x 100 x 2 / 3), so 150 MB/s takes 3; with the chunk
    not given it is the same (md's default chunk, and no md chunk is smaller than the 4 KiB request)."""
    rows = pd.DataFrame([dict(layout="single", devices=1, rw="randread", bs=4096, numjobs=1, iodepth=1, rep=rep,
                              bw_bytes=1e8) for rep in range(2)])
    path = tmp_path / "random.csv"
    rows.to_csv(path, index=False)
    args = ["--target", "150MB/s", "--layout", "md-raid0", "--bs", 4096, "--max-devices", 4, "--format", "csv"]
    assert pd.read_csv(io.StringIO(plan(capsys, path, *args)[1])).iloc[0]["devices"] == 3
    assert pd.read_csv(io.StringIO(plan(capsys, path, *args, "--chunk-bytes", 65536)[1])).iloc[0]["devices"] == 3
    table, _ = sizing.sizing(predict.curve(rows), 1.5e8, layout="md-raid0", max_devices=4, chunk_bytes=4096)
    assert table.set_index("devices").loc[2, "predicted_bw_bytes"] == pytest.approx(2 * 1e8 * 2 / 3)
    imported = pd.concat([rows, rows.assign(layout="md-raid0", devices=2, chunk_bytes=4096)], ignore_index=True)
    assert predict.chunks(imported) == {"md-raid0": 4096, "single": None}


def test_plan_takes_the_baseline_layout_and_flags_the_table_s_rows_beyond_the_curve(tmp_path, capsys):
    """Two one-device layouts measured at one job, iodepth 1; an md stripe measured at 32 x 32 on 4: plan answers
    from the layout named, and says the stripe's row was measured at a load the curve never was."""
    rows = [dict(layout=layout, devices=1, rw="read", bs=2**20, numjobs=1, iodepth=1, rep=rep, bw_bytes=bw)
            for layout, bw in (("nvme-a", 1.0e9), ("nvme-b", 0.98e9)) for rep in range(2)]
    rows += [dict(layout="md0", devices=4, rw="read", bs=2**20, numjobs=32, iodepth=32, rep=rep, bw_bytes=14.6e9)
             for rep in range(2)]
    path = tmp_path / "imported.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    status, _, err = plan(capsys, path, "--target", "20GB/s", "--layout", "md0")
    assert status == 1 and "--baseline-layout NAME" in err
    status, out, _ = plan(capsys, path, "--target", "20GB/s", "--layout", "md0", "--baseline-layout", "nvme-b")
    assert status == 0 and "beyond the curve" in out
    assert "load: the table measured md0 read on 4 devices at 32 jobs x iodepth 32 (256 in flight a device), a load " \
           "the device's curve was never measured at (at most 1)" in out
