"""A truth the machine can deliver: every test bed with a known truth measures itself with its caps lifted first and
holds a cap only where its devices together ask at most half of what was carried (``measure.harness``,
``measure.truth.fit``); elsewhere the caps are lowered to fit (CAP_FIT lower) or the campaign refused (refuse).

The fit's arithmetic is checked on any numbers (hypothesis); on the emulated array and the emulated cluster, caps no
machine of ours carries (tens of GB/s a device) are asked for, so the lowering is exercised for real: the runs are
then held to the caps it chose, and recover that truth."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from flashscale import cli
from flashscale.analysis import evidence
from flashscale.arrays.emulated import ArraySpec, cap_fit_policy, check_cap_fit
from flashscale.campaigns import campaign, cluster
from flashscale.errors import ConfigError, HarnessCeilingError
from flashscale.measure import harness, truth
from flashscale.measure.sweep import Sweep

from conftest import loop_devices_backed_under

GB = 1e9
UNREACHABLE = 40_000_000_000  # bytes/s a device: no loop device on a machine of ours carries 2 x 2 x this


@given(asked=st.floats(1e6, 1e11), units=st.integers(1, 64), ceiling=st.floats(1e6, 1e12))
def test_a_fit_never_holds_more_than_half_of_what_was_carried_nor_more_than_was_asked(asked, units, ceiling):
    try:
        fit = truth.fit("read", asked, units, ceiling, "lower")
    except HarnessCeilingError as exc:  # only where the lowered cap would measure the throttle, not the storage
        assert truth.floor_2_digits(truth.HEADROOM * ceiling / units) < truth.MIN_FITTED_BPS, exc
        return
    assert fit.cap <= asked
    assert fit.cap * units <= truth.HEADROOM * ceiling * (1 + 1e-12) or not fit.adjusted
    if fit.adjusted:  # lowered to two digits under the half: never by more than a tenth of it
        assert fit.cap >= 0.9 * truth.HEADROOM * ceiling / units - 1
        assert "lowered" in fit.why()
    else:
        assert fit.cap == asked and "kept" in fit.why()


def test_refuse_names_the_cap_asked_what_was_carried_and_the_cap_that_would_fit():
    with pytest.raises(HarnessCeilingError) as refused:
        truth.fit("write", 200e6, 2, 500e6, "refuse")
    said = str(refused.value)
    assert "200 MB/s a device" in said and "500 MB/s of writes" in said and "at most 120 MB/s" in said
    kept = truth.fit("write", 200e6, 2, 800e6, "refuse")  # 400 of 800 carried: exactly half, held
    assert not kept.adjusted


def test_an_uncapped_direction_is_kept_as_it_is():
    assert truth.fit("read", 0, 4, 1e6, "refuse").cap == 0
    assert math.isnan(truth.fit("read", math.nan, 4, 1e6, "refuse").cap)


@pytest.mark.parametrize("value, want", [(178_345_000, 170_000_000), (49_600_000, 49_000_000), (1e9, 1e9),
                                         (99.9, 99.0)])
def test_a_lowered_cap_is_rounded_down_to_two_digits(value, want):
    assert truth.floor_2_digits(value) == pytest.approx(want)


def test_cap_fit_is_lower_or_refuse_given_or_from_the_environment(monkeypatch):
    with pytest.raises(ConfigError, match="CAP_FIT='maybe'"):
        check_cap_fit("maybe")
    with pytest.raises(ConfigError, match="CAP_FIT"):
        ArraySpec(cap_fit="sometimes")
    monkeypatch.delenv("FLASHSCALE_CAP_FIT", raising=False)
    assert cap_fit_policy(None) == "lower"
    monkeypatch.setenv("FLASHSCALE_CAP_FIT", "refuse")
    assert cap_fit_policy(None) == "refuse" and cap_fit_policy("lower") == "lower"


def test_the_probe_moves_each_direction_the_sweep_moves_at_its_heaviest_point():
    sweep = Sweep(rw=("read", "randwrite"), bs=(4096, 2**20), numjobs=(1, 8), iodepth=(1, 16))
    probes = harness.jobs(sweep, ["/dev/a", "/dev/b"])
    assert list(probes) == ["read", "write"]  # reads first: their files laid out, the writes overwrite written data
    assert probes["write"].rw == "randwrite" and probes["read"].rw == "read"
    assert {(j.bs, j.numjobs, j.iodepth, j.runtime_s, j.ramp_s) for j in probes.values()} == {(4096, 8, 16, 1, 0)}
    assert harness.jobs(Sweep(rw=("read",), numjobs=(1,)), ["/dev/a", "/dev/b", "/dev/c"])["read"].numjobs == 3
    assert harness.directions(Sweep(rw=("randrw",))) == {"write": "randwrite", "read": "randread"}
    assert harness.directions(Sweep(rw=("filecreate",), nrfiles=(10,))) == {}


def test_analysis_says_when_a_row_s_truth_was_adjusted_and_why():
    import pandas as pd
    rows = pd.DataFrame({"rw": ["read", "write", "read"], "cap_bps": [150e6, 200e6, 150e6],
                         "cap_asked_bps": [200e6, 200e6, 200e6], "harness_bw_bytes": [1.2e9, 3e9, 1.2e9]})
    said = evidence.adjusted_truth_sentences(rows)
    assert len(said) == 1 and said[0].startswith("The reads' truth was adjusted: 2 run(s) were held to 150 MB/s")
    assert "not the 200 MB/s asked" in said[0] and "carried 1,200 MB/s" in said[0]
    assert evidence.adjusted_truth_sentences(rows.assign(cap_bps=200e6)) == []


def _array_spec(tmp_path, cap_fit, backing=None, **sweep) -> campaign.CampaignSpec:
    """``backing``: where the devices' backing files go (a test that holds writes to their cap: ``fast_backing``)."""
    if backing is None:
        backing = tmp_path / "backing"
        backing.mkdir(exist_ok=True)
    return campaign.CampaignSpec(
        "fit", layouts=("single", "jbod"), data_dir=str(tmp_path / "data"),
        array=ArraySpec(devices=2, device_size=2**30, read_bps=UNREACHABLE, write_bps=UNREACHABLE,
                        backing_root=str(backing), cap_fit=cap_fit),
        sweep=Sweep(**{"rw": ("write", "read"), "numjobs": (2,), "iodepth": (4,), "repetitions": 1, "runtime_s": 5, "ramp_s": 1,
                       **sweep}))


@pytest.mark.root
@pytest.mark.alone  # held at what the machine carried alone: another test's runs beside it take their share
def test_caps_the_array_cannot_carry_are_lowered_and_the_runs_recover_the_truth_held(tmp_path, fast_backing):
    # 256 KiB, not 1 MiB: backed in memory, 2 devices at half of the 12.6 GB/s of 1 MiB reads they carried uncapped
    # kept both CPUs busy (1.85 cores) and read 5.6% under the truth held; at 256 KiB, 7.96 GB/s uncapped, the
    # truth of 3.8 GB/s was met with 1.55 cores busy
    result = campaign.run(_array_spec(tmp_path, "lower", fast_backing, bs=(262144,)), progress=False)
    fits = harness.read(result.directory)
    assert set(fits) == {"read", "write"} and all(f.adjusted for f in fits.values()), fits
    raw = result.directory / "raw" / "harness"
    assert {p.name for p in raw.iterdir()} == {"read", "write"}  # the probe's own fio output, kept to rescore
    rows = result.table[result.table["phase"] == "measure"]
    for r in rows.itertuples():
        fit = fits["read" if "read" in r.rw else "write"]
        assert r.cap_bps == pytest.approx(fit.cap) and r.cap_asked_bps == UNREACHABLE
        assert r.harness_bw_bytes == pytest.approx(fit.ceiling)
        assert r.truth_bw_bytes == pytest.approx(r.devices * fit.cap)
        assert r.devices * fit.cap <= truth.HEADROOM * fit.ceiling
    # each layout with one job a device is held at its devices x the cap it was given, and no faster
    assert not rows["above_truth"].any()
    assert (rows["bw_bytes"] / rows["truth_bw_bytes"]).tolist() == pytest.approx([1.0] * len(rows), rel=0.05)
    said = json.loads((result.directory / "notes.json").read_text())
    assert sum("cap lowered from 40 GB/s" in note for note in said) == 2, said
    assert len(evidence.adjusted_truth_sentences(result.table)) == 2


@pytest.mark.root
def test_with_cap_fit_refuse_nothing_is_measured_and_the_reason_is_measured(tmp_path, capsys):
    with pytest.raises(HarnessCeilingError, match="cannot be held as a known truth here: this machine carried"):
        campaign.run(_array_spec(tmp_path, "refuse", rw=("read",)), progress=False)
    folder = tmp_path / "data" / "fit"
    assert not (folder / "rows.jsonl").exists() or "measure" not in (folder / "rows.jsonl").read_text()
    assert loop_devices_backed_under(tmp_path) == []  # the array it measured is gone


@pytest.mark.root
def test_the_command_exits_4_when_the_machine_cannot_carry_the_caps(tmp_path):
    import yaml
    (tmp_path / "backing").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"campaign": "c", "notebooks": ["quickstart"], "parameters": {
        "DATA_DIR": str(tmp_path / "data"), "DEVICES": 2, "DEVICE_SIZE": 2**30, "CAP_READ_BPS": UNREACHABLE,
        "CAP_WRITE_BPS": UNREACHABLE, "CAP_FIT": "refuse",
        "LAYOUTS": ["single", "jbod"], "RW": ["read"], "NUMJOBS": [1], "REPETITIONS": 1, "RUNTIME_S": 1, "RAMP_S": 0}}))
    assert cli.main.__wrapped__(["run", str(path), "--reports", str(tmp_path / "reports")]) == cli.HARNESS_CEILING


@pytest.mark.root
@pytest.mark.alone  # held at what the machine carried alone: another test's runs beside it take their share
def test_the_emulated_cluster_lowers_caps_its_hosts_cannot_carry_and_holds_its_rows_to_them(tmp_path):
    (tmp_path / "backing").mkdir()
    spec = cluster.ClusterSpec(
        "fit", hosts=(1,), data_dir=str(tmp_path),
        array=ArraySpec(devices=2, device_size=2**30, read_bps=UNREACHABLE, write_bps=UNREACHABLE,
                        backing_root=str(tmp_path / "backing"), cap_fit="lower"),
        sweep=Sweep(rw=("read",), numjobs=(2,), repetitions=1, runtime_s=5, ramp_s=1, size=64 * 2**20))
    result = cluster.run(spec)
    fit = harness.read(result.directory)
    assert fit == {}  # a cluster's fits are per storage
    local = json.loads((result.directory / "harness-local.json").read_text())["fits"]["read"]
    rows = result.table[(result.table["phase"] == "measure") & (result.table["host"] != cluster.ALL)]
    assert local["cap"] < UNREACHABLE and set(rows["cap_bps"]) == {local["cap"]}
    assert rows["truth_bw_bytes"].tolist() == pytest.approx([2 * local["cap"]])
    assert rows["bw_bytes"].tolist() == pytest.approx([2 * local["cap"]], rel=0.05)
    assert any("read cap lowered from 40 GB/s" in note for note in result.notes)
