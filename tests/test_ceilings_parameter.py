"""A campaign's ``CEILINGS`` (issue 24): a ceilings file (``flashscale analyze --ceilings``'s format) or a mapping,
checked before anything is built and named when bad; its values become terms of the predictions stated before each
layout is built (memory, the network, PCIe: the file's link wins over sysfs's, and the note says so); its content,
not its path, is the spec campaign.json keeps, so a resume or a re-analysis with other ceilings is refused, naming
each value that changed, and the same content from another file is the same campaign."""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from flashscale.measure import campaign_folder
from flashscale.campaigns import campaign, parameters, preregistered
from flashscale.system import host
from flashscale import cli
from flashscale.notebooks import studies
from flashscale.analysis.prediction.ceilings import pcie_rate
from flashscale.errors import ConfigError
from flashscale.measure import resume
from flashscale.system.devices import System

MB = 1_000_000


def ceilings_file(folder: Path, text: str, name: str = "ceilings.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def spec(tmp_path: Path, **overrides) -> campaign.CampaignSpec:
    return campaign.CampaignSpec.from_parameters(**{
        "CAMPAIGN": "t", "DATA_DIR": str(tmp_path / "data"), "DEVICES": 2, "LAYOUTS": ["single", "jbod", "btrfs-raid0"],
        "RW": ["read"], "NUMJOBS": [1, 2], **overrides})


def single_rows(bw: float = 100 * MB) -> list[dict]:
    """One device measured at ``bw`` with 1 and 2 jobs, two repetitions each (a spread of 2%)."""
    return [{"campaign": "t", "host": "h", "layout": "single", "devices": 1, "rw": "read", "bs": 2**20,
             "numjobs": n, "iodepth": 1, "rep": rep, "warmup": False, "bw_bytes": bw * f, "runtime_s": 3.0,
             "point": f"read-nj{n}", "cpu_busy_cores": 0.1} for n in (1, 2) for rep, f in enumerate((0.99, 1.01))]


def test_a_file_or_a_mapping_gives_the_same_values_and_none_is_none(tmp_path):
    # PyYAML reads 2e10 (no dot, no sign) as a string: what is kept is the number either way
    path = ceilings_file(tmp_path, "memory_bw_bytes: 2e10\npcie_gen: 3\npcie_lanes: 4\nnetwork_links: null\n")
    from_file = spec(tmp_path, CEILINGS=str(path))
    inline = spec(tmp_path, CEILINGS={"pcie_lanes": 4, "pcie_gen": 3, "memory_bw_bytes": 20e9})
    assert from_file.ceilings == inline.ceilings == {"memory_bw_bytes": 20e9, "pcie_gen": 3, "pcie_lanes": 4}
    for nothing in (None, "", {}):
        assert spec(tmp_path, CEILINGS=nothing).ceilings is None
    assert campaign.CampaignSpec.from_parameters().ceilings is None  # the default: no ceilings
    # the VM lab's guest rebuilds the host's spec from its dict: the values, not the file, travel
    assert campaign.CampaignSpec.from_dict(json.loads(json.dumps(asdict(from_file)))).ceilings == from_file.ceilings


@pytest.mark.parametrize("bad, named", [
    ("missing.yaml", "ceilings file 'missing.yaml' does not exist"),
    ({"memroy_bw_bytes": 1e9}, "unknown ceiling parameter(s) 'memroy_bw_bytes'"),
    ({"memory_bw_bytes": -5e9}, "memory_bw_bytes = -5000000000.0 must be a positive number"),
    ({"network_links": 2}, "network_links needs network_link_bw_bytes"),
    ({"pcie_gen": 7, "pcie_lanes": 4}, "PCIe generation 7 is unknown"),
    ({"memory_bw_bytes": True}, "memory_bw_bytes = True: each must be a name and a number"),
    ({"memory_bw_bytes": "fast"}, "memory_bw_bytes = 'fast' is not a number"),
    (12, "12 is neither the path of a ceilings file nor a mapping"),
], ids=["missing", "unknown", "negative", "half", "generation", "bool", "word", "number"])
def test_bad_ceilings_are_named_before_anything_is_built(tmp_path, bad, named):
    with pytest.raises(ConfigError, match="CEILINGS=") as refused:
        spec(tmp_path, CEILINGS=bad)
    assert named in str(refused.value)
    with pytest.raises(ConfigError) as refused:  # the spec itself, as a VM guest or a study's stage builds it
        campaign.CampaignSpec("t", ceilings=bad)
    assert named in str(refused.value) and str(refused.value).startswith(f"CEILINGS={bad!r}")
    assert not (tmp_path / "data").exists()


def test_a_bad_ceilings_file_is_named_by_its_path_and_what_is_wrong_inside(tmp_path):
    for text, named in (("memory_bw_bytes: -1\n", "memory_bw_bytes = -1.0 must be a positive number"),
                        ("- 1\n- 2\n", "ceilings must be a mapping of parameter: value; got list"),
                        ("memory_bw_bytes: [\n", "cannot be read as YAML")):
        path = ceilings_file(tmp_path, text)
        with pytest.raises(ConfigError) as refused:
            parameters.check({"CEILINGS": str(path)}, campaign.PARTS)
        assert f"CEILINGS={str(path)!r}" in str(refused.value) and named in str(refused.value)
    with pytest.raises(ConfigError, match="relative to the checkout"):
        parameters.read_ceilings("no/such/ceilings.yaml")


def test_flashscale_run_refuses_a_bad_ceilings_before_any_notebook_runs(tmp_path, capsys):
    import yaml

    campaign_file = tmp_path / "c.yaml"
    campaign_file.write_text(yaml.safe_dump({"campaign": "c", "notebooks": ["03_layout_tax"], "parameters": {
        "DATA_DIR": str(tmp_path / "data"), "CEILINGS": {"memory_bw_bytes": -1}}}))
    assert cli.main(["run", str(campaign_file), "--reports", str(tmp_path / "reports")]) != 0
    assert "CEILINGS={'memory_bw_bytes': -1}" in capsys.readouterr().err
    assert not (tmp_path / "data").exists() and not (tmp_path / "reports" / "c" / "03_layout_tax.html").exists()


def test_the_ceilings_become_terms_and_the_files_pcie_link_wins_over_sysfs(tmp_path):
    assert preregistered.limits(ceilings={"memory_bw_bytes": 5e9, "network_links": 2,
                                   "network_link_bw_bytes": 1e9}).memory_bw_bytes == pytest.approx(5e9)
    with_links = preregistered.limits(ceilings={"network_links": 2, "network_link_bw_bytes": 1e9})
    assert (with_links.network_links, with_links.network_link_bw_bytes, with_links.cores) == (2, 1e9, host.cores())
    system = fake_sysfs(tmp_path)  # nvme0n1: gen 3 x4
    sysfs = pcie_rate(3, 4)
    assert preregistered.limits(["/dev/nvme0n1"], system).pcie_link() == sysfs
    given = {"pcie_gen": 2, "pcie_lanes": 4, "pcie_efficiency": 0.8}
    assert preregistered.limits(["/dev/nvme0n1"], system, given).pcie_link() == pcie_rate(2, 4, 0.8)
    note = preregistered.limits_note(["/dev/nvme0n1"], system, given)
    assert note == (f"PCIe from CEILINGS, {pcie_rate(2, 4, 0.8) / MB:,.0f} MB/s a device, not the "
                    f"{sysfs / MB:,.0f} MB/s of the link sysfs names: the ceilings win")
    assert "the same as the link sysfs names" in preregistered.limits_note(["/dev/nvme0n1"], system, {"pcie_gen": 3, "pcie_lanes": 4})
    assert preregistered.limits_note([], system, given) == ""  # loop devices: no link of their own to set aside
    assert preregistered.limits_note(["/dev/nvme0n1"], system, {"memory_bw_bytes": 1e9}) == ""
    assert "device_read_bw_bytes of CEILINGS: no term" in preregistered.limits_note([], system, {"device_read_bw_bytes": 1e9})
    assert preregistered.limits(["/dev/nvme0n1"], system, given, pcie_link_bw_bytes=1e9).pcie_link() == pytest.approx(1e9)  # more: on top of all


def fake_sysfs(tmp_path: Path) -> System:
    """A sysfs naming nvme0n1 behind a PCIe gen 3 x4 link (``System.pcie_link``)."""
    function = tmp_path / "sys" / "devices" / "pci0000:00" / "0000:00:00.0"
    (function / "nvme").mkdir(parents=True)
    (function / "current_link_speed").write_text("8.0 GT/s PCIe\n")
    (function / "current_link_width").write_text("4\n")
    (tmp_path / "sys" / "block" / "nvme0n1").mkdir(parents=True)
    os.symlink(function / "nvme", tmp_path / "sys" / "block" / "nvme0n1" / "device")
    return System(sys=tmp_path / "sys", proc=tmp_path)


@pytest.mark.parametrize("ceilings, term, bound", [
    ({"memory_bw_bytes": 150 * MB}, "memory", 150 * MB),  # 2 jobs on 2 devices: 200 MB/s, above it
    ({"pcie_gen": 1, "pcie_lanes": 1, "pcie_efficiency": 0.3}, "pcie", 2 * 75 * MB),  # 250 MB/s x 30% a device
], ids=["memory", "pcie"])
def test_a_campaign_whose_ceiling_is_below_its_devices_states_predictions_bound_by_it(tmp_path, ceilings, term,
                                                                                      bound):
    """What the campaign wires (``campaign.preregistration``): the spec's CEILINGS on top of this machine's limits, each
    layout's prediction stated before it is built, from the single rows measured so far."""
    directory = tmp_path / "campaign"
    directory.mkdir()
    campaign_folder.append_rows(directory, single_rows(100 * MB))
    given = spec(tmp_path, CEILINGS=ceilings)
    state = campaign.preregistration(given, campaign.choose(given), directory)
    for layout in ("single", "jbod", "btrfs-raid0"):
        state(layout)
    stated_now = campaign_folder.read_predictions(directory).set_index(["layout", "numjobs"])
    assert sorted(set(stated_now.index.get_level_values("layout"))) == ["btrfs-raid0", "jbod"]
    two = stated_now.xs(2, level="numjobs")
    assert two["devices_limit_bw_bytes"].tolist() == pytest.approx([200 * MB] * 2)
    assert two[f"{term}_limit_bw_bytes"].tolist() == pytest.approx([bound] * 2)
    assert list(two["predicted_limit"]) == [term] * 2
    assert two["predicted_bw_bytes"].tolist() == pytest.approx([bound] * 2)
    assert two["predicted_hi"].tolist() == pytest.approx([bound] * 2)  # a ceiling is exact: it caps the interval
    # jbod's one job keeps one device busy, below both ceilings: the devices bind there
    assert stated_now.loc[("jbod", 1), "predicted_limit"] == "devices"


def test_without_ceilings_the_same_campaign_is_bound_by_its_devices(tmp_path):
    """The test above can fail: the same rows and no CEILINGS state no PCIe term, and the memory's is this
    machine's own copy rate (``system.host``, measured once per campaign), far above two devices' 200 MB/s."""
    directory = tmp_path / "campaign"
    directory.mkdir()
    campaign_folder.append_rows(directory, single_rows(100 * MB))
    given = spec(tmp_path)
    campaign.preregistration(given, campaign.choose(given), directory)("jbod")
    predicted = campaign_folder.read_predictions(directory)
    assert (predicted["memory_limit_bw_bytes"] > 1000 * MB).all() and predicted["pcie_limit_bw_bytes"].isna().all()
    assert set(predicted["predicted_limit"]) <= {"devices", "cpu"}


def test_a_stage_without_its_own_single_predicts_from_the_studys_baseline(tmp_path, monkeypatch):
    """03_layout_tax after 01_baseline measures no single: its layouts are predicted from 01's single rows; a stage
    that measured its own single reads its own (the same devices, just before)."""
    own, baseline = tmp_path / "03", tmp_path / "01"
    own.mkdir(), baseline.mkdir()
    campaign_folder.append_rows(baseline, single_rows(100 * MB))
    points = [{"rw": "read", "bs": 2**20, "numjobs": 2, "iodepth": 1}]
    preregistered.Preregistration(own, points, lambda name: 2, preregistered.limits(), baseline=baseline)("jbod")
    assert campaign_folder.read_predictions(own)["devices_limit_bw_bytes"].tolist() == pytest.approx([200 * MB])
    campaign_folder.append_rows(own, single_rows(50 * MB))
    preregistered.Preregistration(own, points, lambda name: 2, preregistered.limits(), baseline=baseline)("btrfs-raid0")
    raid0 = campaign_folder.read_predictions(own).query("layout == 'btrfs-raid0'")
    assert raid0["devices_limit_bw_bytes"].tolist() == pytest.approx([100 * MB])
    preregistered.Preregistration(tmp_path / "none", points, lambda name: 2, preregistered.limits(), baseline=tmp_path / "no")("jbod")
    assert campaign_folder.read_predictions(tmp_path / "none").empty
    # a study's stage passes its baseline stage's folder to the campaign
    seen = {}

    def run(spec, progress, baseline):
        seen["baseline"] = baseline
        return campaign.CampaignResult(None, tmp_path, "loop", [])

    monkeypatch.setattr(campaign, "run", run)
    monkeypatch.setattr(studies, "_labelled", lambda table, study, stage: table)
    monkeypatch.setattr(studies, "_note_stage", lambda *args: None)
    studies.run_stage("03_layout_tax", {"CAMPAIGN": "s", "DATA_DIR": str(tmp_path)}, LAYOUTS=["jbod"],
                      baseline_stage=studies.BASELINE_STAGE)
    assert seen["baseline"] == tmp_path / "s" / studies.BASELINE_STAGE


def stored_campaign(folder: Path, spec_: campaign.CampaignSpec) -> None:
    """A finished campaign's folder as campaign.run leaves it, without measuring."""
    folder.mkdir(parents=True)
    (folder / "campaign.json").write_text(json.dumps({"run_id": "20261126T000000Z", "spec": resume.plain(asdict(
        spec_)), "environment": {"backend": "directory"}}))
    campaign_folder.append_rows(folder, single_rows())
    (folder / resume.NOTES_JSON).write_text("[]")


def test_campaign_json_keeps_the_content_and_a_change_is_named_on_resume_and_re_analysis(tmp_path, monkeypatch):
    first = ceilings_file(tmp_path, "memory_bw_bytes: 1e9\n", "first.yaml")
    same = ceilings_file(tmp_path, "memory_bw_bytes: 1000000000\n", "same.yaml")
    other = ceilings_file(tmp_path, "memory_bw_bytes: 2.0e+9\n", "other.yaml")
    folder = tmp_path / "data" / "t"
    stored_campaign(folder, spec(tmp_path, CEILINGS=str(first)))
    assert json.loads((folder / "campaign.json").read_text())["spec"]["ceilings"] == {"memory_bw_bytes": 1e9}
    before = campaign_folder.read_campaign(folder)
    assert resume.differences(before, asdict(spec(tmp_path, CEILINGS=str(same))), before["environment"]) == []
    changed = resume.differences(before, asdict(spec(tmp_path, CEILINGS=str(other))), before["environment"])
    assert changed == ["ceilings.memory_bw_bytes: 1000000000.0 then, 2000000000.0 now"]
    gone = resume.differences(before, asdict(spec(tmp_path)), before["environment"])
    assert gone == ["ceilings.memory_bw_bytes: 1000000000.0 then, None now"]
    # a campaign.json from before CEILINGS existed is the same campaign as one without ceilings
    older = {**before, "spec": {k: v for k, v in before["spec"].items() if k != "ceilings"}}
    assert resume.differences(older, asdict(spec(tmp_path)), before["environment"]) == []
    # resumed: refused, naming the value, unless forced (then said)
    with pytest.raises(ConfigError, match=r"ceilings.memory_bw_bytes: 1000000000.0 then, 2000000000.0 now"):
        resume.open_campaign(folder, asdict(spec(tmp_path, CEILINGS=str(other))), before["environment"], [], True,
                             False)
    # re-analysed: the same content from another file is the stored campaign; other ceilings are refused
    monkeypatch.setenv(resume.REANALYZE, "1")
    again = campaign.run(spec(tmp_path, CEILINGS=str(same)), progress=False)
    assert again.directory == folder and len(again.table) == len(single_rows())
    with pytest.raises(ConfigError, match="--reanalyze: .*ceilings.memory_bw_bytes: 1000000000.0 then"):
        campaign.run(spec(tmp_path, CEILINGS=str(other)), progress=False)
    notes = []
    resume.open_campaign(folder, asdict(spec(tmp_path, CEILINGS=str(other))), before["environment"], notes, True,
                         True)
    assert any("FORCE_RESUME" in n and "ceilings.memory_bw_bytes" in n for n in notes)


def test_a_directory_campaign_with_ceilings_states_them_and_records_them(tmp_path):
    """With real fio, on plain directories (no root): the memory ceiling far below any disk binds jbod's
    predictions; campaign.json records the file's values; a resume with another file is refused before anything
    runs, one with the same content resumes."""
    path = ceilings_file(tmp_path, "memory_bw_bytes: 1e6\n")
    run_spec = spec(tmp_path, EMULATION="directory", LAYOUTS=["single", "jbod"], NUMJOBS=[2], RUNTIME_S=1, RAMP_S=0,
                    FILE_SIZE=8 * 2**20, CEILINGS=str(path))
    result = campaign.run(run_spec, progress=False)
    predicted = result.predictions
    assert list(predicted["layout"]) == ["jbod"] and list(predicted["predicted_limit"]) == ["memory"]
    assert predicted["predicted_bw_bytes"].tolist() == pytest.approx([1e6])
    assert (predicted["devices_limit_bw_bytes"] > 1e6).all()
    measured = result.table.query("layout == 'jbod' and phase == 'measure'")
    assert predicted["predicted_at"].max() <= measured["started_at"].min()
    kept = json.loads((result.directory / "campaign.json").read_text())["spec"]["ceilings"]
    assert kept == {"memory_bw_bytes": 1e6}
    path.write_text("memory_bw_bytes: 3e6\n")
    with pytest.raises(ConfigError, match=r"ceilings.memory_bw_bytes: 1000000.0 then, 3000000.0 now"):
        campaign.run(spec(tmp_path, EMULATION="directory", LAYOUTS=["single", "jbod"], NUMJOBS=[2], RUNTIME_S=1,
                          RAMP_S=0, FILE_SIZE=8 * 2**20, CEILINGS=str(path), RESUME=True), progress=False)
    resumed = campaign.run(spec(tmp_path, EMULATION="directory", LAYOUTS=["single", "jbod"], NUMJOBS=[2],
                                RUNTIME_S=1, RAMP_S=0, FILE_SIZE=8 * 2**20, CEILINGS={"memory_bw_bytes": 1e6},
                                RESUME=True), progress=False)
    assert resumed.directory == result.directory and resumed.predictions.equals(predicted)
