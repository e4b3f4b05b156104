"""A tax decided as the runs arrive (PRECISION with a reference measured at the point): a layout's point goes on
past its precision until the group-sequential test (``significance.sequential_tax``) decides a tax, a gain or
equivalence against the 2% margin, or MAX_REPETITIONS is reached; its rows say ``decided`` (or ``max``), and the
summary and its sentence say which test decided and after how many runs. Truth known: rates drawn around a
stated tax (a stub in fio's place), and a stripe held back by one slow capped loop device (real fio)."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from tqdm.std import tqdm

from flashscale.analysis import evidence, findings, repetitions, significance, stats
from flashscale.arrays import layouts
from flashscale.campaigns import campaign
from flashscale.measure import fio, fio_output, results, truth
from flashscale.measure.recorder import Recorder
from flashscale.measure.reference import reference_of, reference_runs
from flashscale.measure.sweep import Sweep
from flashscale.errors import ConfigError

from conftest import loop_devices_backed_under

GOLDEN = Path(__file__).parent / "golden"
TRUTH = 200e6
REFERENCE = list(TRUTH * np.random.default_rng(0).lognormal(0, 0.004, 10))  # jbod's runs at the point: a tax
# reference runs to its most (measure.recorder), 10 here
MIB, KIB128 = 1048576, 131072


def runs_until_stopped(tax: float, spread: float, seed: int, most: int = 10) -> list[tuple[str, float]]:
    """A layout of a known ``tax`` against REFERENCE, its runs drawn with a relative ``spread``: (reps_reason,
    relative half-width) after each run, until ``repetitions.decision`` stops it at PRECISION 0.05."""
    rng, values, said = np.random.default_rng(seed), [], []
    while not said or said[-1][0] == "more":
        values.append(TRUTH * (1 - tax) * float(rng.lognormal(0, spread)))
        said.append((repetitions.decision(values, REFERENCE, 0.05, most), repetitions.relative_half_width(values)))
    return said


@pytest.mark.parametrize("tax, spread, seed, verdict", [(0.04, 0.01, 1, "tax"), (0.04, 0.01, 2, "tax"),
                                                        (0.0, 0.003, 3, "equivalent"), (0.10, 0.005, 5, "tax")])
def test_a_precise_point_goes_on_until_the_sequential_test_decides(tax, spread, seed, verdict):
    """Each stops ``decided``, and only once the group-sequential test says the verdict of its truth; at every
    look before it where the point was already precise (half-width within 0.05) it went on (``more``), which is
    what a precision-only rule would have stopped at (measured, seeds fixed, against REFERENCE's 10 runs: a 4% tax
    precise at 2 runs decided at 5, and at 7; no tax precise at 3, decided at 4)."""
    said = runs_until_stopped(tax, spread, seed)
    assert said[-1][0] == "decided"
    assert all(why == "more" for why, _ in said[:-1])
    rng, values = np.random.default_rng(seed), []
    for _ in said:
        values.append(TRUTH * (1 - tax) * float(rng.lognormal(0, spread)))
    look = significance.sequential_tax(values, REFERENCE, 10)
    assert look.verdict == verdict and look.decided
    early = [len(values[:k]) for k in range(2, len(values)) if said[k - 1][1] <= 0.05]
    for k in early:  # precise, yet not decided: a precision-only rule stops here, this one must not
        assert repetitions.stop_reason(values[:k], 0.05, 10) == "precise"
        assert significance.sequential_tax(values[:k], REFERENCE, 10).verdict not in repetitions.DECISIVE
    if tax == pytest.approx(0.04, abs=1e-12):
        assert early, "the 4% tax's point was precise before it was decided (the case this test is for)"


def test_a_tax_on_the_margins_edge_runs_to_the_most_and_says_max():
    said = runs_until_stopped(0.02, 0.01, 4, most=10)
    assert [why for why, _ in said] == ["more"] * 9 + ["max"]



def test_tax_margin_is_the_campaigns_and_the_sequential_test_decides_against_it():
    """TAX_MARGIN sets the campaign's margin (it decided against the default 2% whatever the notebook said): the
    2% tax that runs to the most against 2% is decided within a margin of 5% (equivalent)."""
    spec = campaign.CampaignSpec.from_parameters(TAX_MARGIN=0.05, PRECISION=0.05)
    assert spec.tax_margin == pytest.approx(0.05, abs=1e-12)
    assert campaign.CampaignSpec.from_parameters().tax_margin == pytest.approx(significance.DEFAULT_MARGIN, abs=1e-12)
    with pytest.raises(ConfigError, match=r"TAX_MARGIN=1\.5"):
        campaign.CampaignSpec.from_parameters(TAX_MARGIN=1.5)
    rng, values = np.random.default_rng(4), []
    for _ in range(10):
        values.append(TRUTH * 0.98 * float(rng.lognormal(0, 0.01)))
    wide = repetitions.stopping(0.05, 10, 2, spec.tax_margin)
    ends = next(k for k in range(2, 11) if wide(values[:k], REFERENCE) != "more")
    assert wide(values[:ends], REFERENCE) == "decided" and ends < 10
    assert significance.sequential_tax(values[:ends], REFERENCE, 10, 0.05).verdict == "equivalent"

def test_without_a_reference_a_point_stops_when_precise():
    assert repetitions.decision([TRUTH, 1.001 * TRUTH], None, 0.05, 10) == "precise"
    assert repetitions.decision([TRUTH, 1.001 * TRUTH], [TRUTH], 0.05, 10) == "precise"  # one reference run


def test_the_reference_is_jbod_or_n_times_the_single_device():
    rates = {("jbod", "p", 0): [4.0, 4.2], ("single", "p", 0): [1.0, 1.1]}
    assert reference_of(["single", "jbod", "btrfs-raid0"]) == "jbod"
    assert reference_of(["single", "btrfs-raid0"]) == "single"
    assert reference_of(["btrfs-raid0"]) is None
    assert reference_runs(rates, "jbod", "btrfs-raid0", 4, "p") == pytest.approx([4.0, 4.2], rel=1e-12)
    assert reference_runs(rates, "single", "btrfs-raid0", 4, "p") == pytest.approx([4.0, 4.4], rel=1e-12)
    assert reference_runs(rates, "jbod", "jbod", 4, "p") is None
    assert reference_runs(rates, "single", "single", 1, "p") is None
    assert reference_runs(rates, "jbod", "btrfs-raid0", 4, "q") is None  # not measured at that point yet
    rates[("jbod", "p", 1)] = [3.9]  # every build of the reference counts (BUILDS)
    assert reference_runs(rates, "jbod", "btrfs-raid0", 4, "p") == pytest.approx([4.0, 4.2, 3.9], rel=1e-12)


def stub_fio(taxes: dict[tuple[str, int], float], spread: float, seed: int = 0):
    """fio.run replaced by real fio output whose write bandwidth is TRUTH x (1 - the tax of (layout, bs)),
    with a multiplicative spread; the layout read from the run's raw folder (raw/<layout>/...)."""
    output = fio_output.load_output((GOLDEN / "write_1target.json").read_text())
    rng = np.random.default_rng(seed)

    def run(job, outdir, runner, *, cgroup_procs=()):
        Path(outdir).mkdir(parents=True)
        layout = Path(outdir).relative_to(Path(outdir).parents[2]).parts[0]
        data = copy.deepcopy(output)
        data["jobs"][0]["write"]["bw_bytes"] = TRUTH * (1 - taxes[layout, job.bs]) * rng.lognormal(0, spread)
        return data
    return run


def test_a_sweep_runs_each_layouts_point_to_a_decision_and_says_so(tmp_path, monkeypatch):
    """jbod (the reference) then btrfs-raid0: at 1 MiB a 6% tax, at 128 KiB one on the margin's edge (2%).
    jbod's points run to the most (the tax reference, which every layout's test shares: measure.recorder);
    btrfs-raid0's first is decided (a tax), its second runs to the most (max); the
    summary reads both with the group-sequential test and its sentences say how many runs and which test."""
    taxes = {("jbod", MIB): 0.0, ("jbod", KIB128): 0.0, ("btrfs-raid0", MIB): 0.06, ("btrfs-raid0", KIB128): 0.02}
    monkeypatch.setattr(fio, "run", stub_fio(taxes, 0.01, seed=3))
    sweep = Sweep(rw=["write"], bs=(MIB, KIB128), numjobs=(1,), precision=0.05, max_repetitions=8,
                  precondition=False)
    recorder = Recorder("seq", "localhost", sweep, tmp_path, None, "run", {"read": None, "write": None},
                        tqdm(disable=True), {}, stopping=repetitions.stopping(0.05, 8),
                        tax_reference=reference_of(["jbod", "btrfs-raid0"]))
    for name in ("jbod", "btrfs-raid0"):
        recorder.sweep(layouts.Layout(name, 2, (str(tmp_path),), "directory", "a folder"), [])
    table = results.rebuild_table(tmp_path)
    said = repetitions.stopped(table).set_index(["layout", "bs"])
    assert set(said.loc["jbod", "reps_reason"]) == {"reference"} and set(said.loc["jbod", "reps"]) == {8}
    assert said.loc[("btrfs-raid0", MIB), "reps_reason"] == "decided"
    assert said.loc[("btrfs-raid0", KIB128), ["reps", "reps_reason"]].tolist() == [8, "max"]
    measured = table[table["phase"] == "measure"]
    assert set(measured["reps_most"]) == {8}
    summary = stats.summary_intervals(table, reference="jbod", baseline_bs=None, by="bs").set_index(["layout", "bs"])
    decided, edge = summary.loc[("btrfs-raid0", MIB)], summary.loc[("btrfs-raid0", KIB128)]
    assert decided["tax_verdict"] == "tax" and decided["tax_test"] == "group-sequential"
    assert decided["best_reps_reason"] == "decided" and decided["tax_confidence"] < 0.999
    assert edge["tax_verdict"] == "inconclusive" and edge["best_reps_reason"] == "max"
    assert summary.loc[("jbod", MIB), "tax_test"] == "none"
    words = " ".join(findings.conclusions(summary.reset_index()))
    runs, theirs = int(said.loc[("btrfs-raid0", MIB), "reps"]), int(said.loc[("jbod", MIB), "reps"])
    assert f"n = {runs} and {theirs}, decided by the group-sequential test" in words
    assert "still undecided at the most runs by the group-sequential test" in words
    report = evidence.measurement_sentences(table)  # what the report says of the runs, per reason they stopped
    assert "1 point(s) ran until the group-sequential tax test decided: " + f"{runs} runs each." in report
    assert "1 point(s) ran to MAX_REPETITIONS: 8 runs each." in report
    assert "2 point(s) ran to MAX_REPETITIONS as the tax reference, whose runs every layout's test shares: 8 runs " \
        "each." in report


def test_built_twice_each_build_s_runs_are_read_as_the_campaign_decided_them(tmp_path, monkeypatch):
    """BUILDS=2 with PRECISION, MAX_REPETITIONS=4: jbod (the reference) then btrfs-raid0 with a 6% tax, each build
    of btrfs-raid0 run to a decision of its own against jbod's runs. The summary reads a look per build, as the
    campaign ran them, and calls the tax; pooling both builds' runs into one look read it past its most (4 runs),
    at a level of 1e-12, and called the same data inconclusive (checked: this case failed so before). Builds that
    disagree give inconclusive (test_tax_tests). At most 3 runs a build, one build's 3 runs (Hsu's 2 degrees of
    freedom) came out inconclusive at its last look."""
    taxes = {("jbod", MIB): 0.0, ("btrfs-raid0", MIB): 0.06}
    monkeypatch.setattr(fio, "run", stub_fio(taxes, 0.01, seed=5))
    sweep = Sweep(rw=["write"], bs=(MIB,), numjobs=(1,), precision=0.05, max_repetitions=4, builds=2,
                  precondition=False)
    recorder = Recorder("builds", "localhost", sweep, tmp_path, None, "run", {"read": None, "write": None},
                        tqdm(disable=True), {}, stopping=repetitions.stopping(0.05, 4),
                        tax_reference=reference_of(["jbod", "btrfs-raid0"]))
    for name in ("jbod", "btrfs-raid0"):
        for build in range(2):
            recorder.build = build
            recorder.sweep(layouts.Layout(name, 2, (str(tmp_path),), "directory", "a folder"), [])
    table = results.rebuild_table(tmp_path)
    measured = table[(table["phase"] == "measure") & (table["layout"] == "btrfs-raid0")]
    assert sorted(set(measured["build"].astype(int))) == [0, 1] and len(measured) > 4  # more than one look's most
    summary = stats.summary_intervals(table, reference="jbod", baseline_bs=None).set_index("layout")
    raid0 = summary.loc["btrfs-raid0"]
    assert raid0["tax_test"] == "group-sequential" and raid0["tax_verdict"] == "tax"
    assert raid0["tax_lo"] > 0.02 and raid0["tax_confidence"] < 0.999


def test_without_a_precision_the_fixed_test_reads_the_tax(tmp_path, monkeypatch):
    taxes = {("jbod", MIB): 0.0, ("btrfs-raid0", MIB): 0.06}
    monkeypatch.setattr(fio, "run", stub_fio(taxes, 0.01))
    sweep = Sweep(rw=["write"], bs=(MIB,), numjobs=(1,), repetitions=3, precondition=False)
    recorder = Recorder("fixed", "localhost", sweep, tmp_path, None, "run", {"read": None, "write": None},
                        tqdm(disable=True), {}, tax_reference="jbod")
    for name in ("jbod", "btrfs-raid0"):
        recorder.sweep(layouts.Layout(name, 2, (str(tmp_path),), "directory", "a folder"), [])
    summary = stats.summary_intervals(results.rebuild_table(tmp_path), reference="jbod", baseline_bs=None)
    row = summary.set_index("layout").loc["btrfs-raid0"]
    assert row["tax_test"] == "fixed" and row["best_reps_reason"] == "fixed"
    assert row["tax_confidence"] == pytest.approx(0.95, abs=1e-12)


CAP = 200_000_000
SLOW = 0.9  # the last device's cap, as a fraction of the others' (tests/test_tax_slow_device.py)


@pytest.mark.root
def test_on_capped_loop_devices_a_real_tax_is_decided_by_the_sequential_test(tmp_path, fast_backing):
    """One of four devices capped 10% lower: btrfs-raid0's stripe is held to 4 x 180 MB/s, jbod's jobs add up to
    780 MB/s, a 7.7% tax (the truth, beyond the 2% margin). With PRECISION=0.05 and jbod measured first, the
    stripe's point runs until the group-sequential test decides: its last row says decided, its verdict is a tax
    and the interval holds the truth; jbod, the tax reference, ran to the most (4); nothing is left behind."""
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="seq", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=4,
        DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, CAP_SCALE=[1, 1, 1, SLOW],
        LAYOUTS=["jbod", "btrfs-raid0"], RW=["read"], BS=[1048576], NUMJOBS=[4], IODEPTH=[1], PRECISION=0.05,
        MAX_REPETITIONS=4, RUNTIME_S=round(truth.SLICE_FREE_S), RAMP_S=1, FILE_SIZE=64 * 2**20)
    result = campaign.run(spec, progress=False)
    assert not loop_devices_backed_under(fast_backing)
    said = repetitions.stopped(result.table).set_index("layout")
    assert said.loc["jbod", ["reps", "reps_reason"]].tolist() == [4, "reference"]
    assert said.loc["btrfs-raid0", "reps_reason"] == "decided"
    summary = stats.summary_intervals(result.table, reference="jbod", baseline_bs=None, margin=0.02)
    raid0 = summary.set_index("layout").loc["btrfs-raid0"]
    assert raid0["tax_verdict"] == "tax" and raid0["tax_test"] == "group-sequential"
    # the truth, 7.7%, as the harness states it: each side's 5 s runs may be up to 2% above their caps (measure.truth),
    # and a 95% interval need not hold the exact figure (a fresh clone of 477834b: its interval ended at 7.685%, the
    # truth 7.692%)
    low, high = truth.tax_band(1 - 4 * SLOW / (3 + SLOW), spec.sweep.runtime_s)
    assert raid0["tax_lo"] <= high and raid0["tax_hi"] >= low, (raid0["tax_lo"], raid0["tax_hi"], low, high)
    assert low <= raid0["tax"] <= high, raid0["tax"]
    assert raid0["best_reps"] == said.loc["btrfs-raid0", "reps"]


@pytest.mark.root
def test_without_jbod_a_layout_is_decided_against_n_times_the_single_device(tmp_path, fast_backing):
    """No jbod: btrfs-raid0 on two capped devices against 2 x the single device measured at the same point. Both
    are held to the same truth (2 x the cap): the point runs until the group-sequential test decides (measured:
    equivalent within the 2% margin, at 3 runs) or the most runs; either way its last row says what the test's
    own last look says, and the single device's rows run to the most (4: the tax reference's runs, every layout's
    test shares them; no tax is asked of the reference itself)."""
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="seqsingle", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=2,
        DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, LAYOUTS=["single", "btrfs-raid0"], RW=["read"],
        BS=[1048576], NUMJOBS=[2], IODEPTH=[1], PRECISION=0.05, MAX_REPETITIONS=4,
        RUNTIME_S=round(truth.SLICE_FREE_S), RAMP_S=1, FILE_SIZE=64 * 2**20)
    result = campaign.run(spec, progress=False)
    assert not loop_devices_backed_under(fast_backing)
    said = repetitions.stopped(result.table).set_index("layout")
    assert said.loc["single", ["reps", "reps_reason"]].tolist() == [4, "reference"]
    assert said.loc["btrfs-raid0", "reps_reason"] in ("decided", "max")
    measured = result.table[result.table["phase"] == "measure"]
    raid0 = measured[measured["layout"] == "btrfs-raid0"].sort_values("rep")["bw_bytes"].to_numpy(float)
    single = measured[measured["layout"] == "single"]["bw_bytes"].to_numpy(float)
    look = significance.sequential_tax(raid0, 2 * single, 4)
    assert (said.loc["btrfs-raid0", "reps_reason"] == "decided") == (look.verdict in repetitions.DECISIVE)
    assert look.verdict != "gain"  # never above its truth (2 x the cap); measured: equivalent at 3 runs. A tax is
    # not refused: on 2 loaded cores btrfs's own CPU cost can be one, which this test does not claim to rule out


def margin_campaign(tmp_path: Path, margin: float):
    """jbod and an existing mount point on as many devices (plain directories: the stub answers for fio), the
    mount point's runs drawn 2% below jbod's: the campaign's rows at TAX_MARGIN=``margin``, seeds fixed, so
    every campaign draws the same runs in the same order."""
    existing = tmp_path / f"mount-{margin}"
    existing.mkdir()
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN=f"margin{margin}", DATA_DIR=str(tmp_path / "data"), EMULATION="directory", DEVICES=2,
        LAYOUTS=["jbod", "mounted"], MOUNT_DIR=str(existing), MOUNT_DEVICES=2, RW=["write"], BS=[MIB],
        NUMJOBS=[1], IODEPTH=[1], PRECISION=0.05, MAX_REPETITIONS=10, TAX_MARGIN=margin, PRECONDITION=False,
        WARMUP=False, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=2**20)
    result = campaign.run(spec, progress=False)
    measured = result.table[result.table["phase"] == "measure"]
    return measured[measured["layout"] == "mounted"].sort_values("rep"), measured[measured["layout"] == "jbod"]


def test_the_campaigns_tax_margin_decides_the_same_runs_differently(tmp_path, monkeypatch):
    """TAX_MARGIN reaches the sequential test through the campaign (CampaignSpec.tax_margin, campaign's recorder):
    the same runs of a 2% tax are decided equivalent within 5%, and at 1% the point runs on past that run (with
    the margin left out of the campaign's recorder, this fails: checked)."""
    stopped = {}
    for margin in (0.05, 0.01):
        monkeypatch.setattr(fio, "run", stub_fio({("jbod", MIB): 0.0, ("mounted", MIB): 0.02}, 0.01, seed=4))
        stopped[margin] = margin_campaign(tmp_path, margin)
    wide, jbod = stopped[0.05]
    narrow, _ = stopped[0.01]
    ends = len(wide)
    assert wide["reps_reason"].iloc[-1] == "decided" and len(narrow) > ends
    assert narrow["bw_bytes"].iloc[:ends].tolist() == pytest.approx(wide["bw_bytes"].tolist(), rel=1e-12)  # the same
    assert narrow["reps_reason"].iloc[ends - 1] == "more"
    same, theirs = wide["bw_bytes"].to_numpy(float), jbod["bw_bytes"].to_numpy(float)
    assert significance.sequential_tax(same, theirs, 10, 0.05).verdict == "equivalent"
    assert significance.sequential_tax(same, theirs, 10, 0.01).verdict not in repetitions.DECISIVE
    # measured (seed 4): decided equivalent at 6 runs within 5%; within 1% undecided to the most, 10 runs (max)
    assert (ends, len(narrow), narrow["reps_reason"].iloc[-1]) == (6, 10, "max")


@pytest.mark.parametrize("reference, decided", [("jbod", "mounted"), ("mounted", "jbod")])
def test_the_campaigns_reference_is_the_one_the_sequential_test_decides_against(tmp_path, monkeypatch, reference,
                                                                                decided):
    """REFERENCE reaches the sequential test through the campaign (CampaignSpec.reference), as TAX_MARGIN does:
    LAYOUTS names the mount point first, then jbod, 6% faster than it. Against REFERENCE=mounted jbod's point runs
    until the test decides (a gain); against jbod (the default) jbod is measured first, though named second, so the
    mount point's 6% tax is decided as its points run (with LAYOUTS' order kept, no tax could be asked of it: both
    stopped precise before the reference went first). The reference runs to the most (10): its runs every
    layout's test shares."""
    monkeypatch.setattr(fio, "run", stub_fio({("jbod", MIB): 0.0, ("mounted", MIB): 0.06}, 0.01, seed=2))
    existing = tmp_path / "mount"
    existing.mkdir()
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="reference", DATA_DIR=str(tmp_path / "data"), EMULATION="directory", DEVICES=2,
        LAYOUTS=["mounted", "jbod"], MOUNT_DIR=str(existing), MOUNT_DEVICES=2, RW=["write"], BS=[MIB],
        NUMJOBS=[1], IODEPTH=[1], PRECISION=0.05, MAX_REPETITIONS=10, REFERENCE=reference, PRECONDITION=False,
        WARMUP=False, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=2**20)
    assert spec.reference == reference
    result = campaign.run(spec, progress=False)
    said = repetitions.stopped(result.table).set_index("layout")["reps_reason"]
    assert said.to_dict() == {name: "decided" if name == decided else "reference" for name in ("jbod", "mounted")}
    measured = result.table[result.table["phase"] == "measure"]
    assert measured["layout"].iloc[0] == reference  # the reference's runs came first
    assert any("jbod was measured before mounted" in n for n in result.notes) == (reference == "jbod")
