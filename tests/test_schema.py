"""Bad input is refused as a whole, before anything is touched, naming the field and the value (issue 11)."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from flashscale.campaigns import campaign, cluster, parameters, rules
from flashscale.notebooks import execute
from flashscale.analysis import core as analysis
from flashscale.errors import ConfigError, FlashscaleError
from flashscale.measure import results
from flashscale.system.commands import Runner

from conftest import loop_devices_backed_under

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


VALID = "campaign: t\nnotebooks: [quickstart]\nparameters: {DEVICES: 2}\n"


def test_every_parameter_has_a_type_a_default_and_a_meaning():
    assert set(parameters.SCHEMA) == set(parameters.PARAMETERS) | {"CAMPAIGN"}
    ours = {kind: set(parameters.model(parts).model_fields) for kind, parts in
            [("campaign", campaign.PARTS), ("cluster", cluster.PARTS)]}
    assert set(parameters.SCHEMA) == ours["campaign"] | ours["cluster"]  # each sets a field of one spec or both
    assert {"HOSTS", "STORAGE", "LINK_BPS", "SUBNET", "REMOTE_HOSTS", "INVENTORY", "HOST_GROUP", "KNOWN_HOSTS",
            "SSH_IDENTITY", "SSH_CONFIG", "CLOCK_TOLERANCE_S"} == ours["cluster"] - ours["campaign"]
    # LAYOUTS, TESTBED, CONFIRM, WIPE and the layouts' options: built on real hosts over SSH as on a test bed
    assert cluster.PARTS["spec"] is cluster.ClusterSpec and {"LAYOUTS", "TESTBED", "CONFIRM", "FS"} <= ours["cluster"]
    assert {"EMULATION", "MOUNT_DIR", "RESUME"}.isdisjoint(ours["cluster"])
    fields = parameters.model(campaign.PARTS).model_fields
    assert fields["DEVICES"].default == campaign.ArraySpec().devices
    assert fields["NUMJOBS"].default == campaign.Sweep().numjobs
    assert fields["ON_FAILURE"].default == "continue" and fields["RESUME"].default is False
    assert all(info.description for info in fields.values())


def test_the_reference_renders_the_parameters_from_the_schema():
    """docs/reference/parameters.md renders them when the site is built (tests/test_docs.py builds it)."""
    page = (ROOT / "docs" / "reference" / "parameters.md").read_text()
    assert "{flashscale-parameters} campaign" in page and "{flashscale-parameters} cluster" in page


@pytest.mark.parametrize("given, named", [
    ({"DEVICES": "4"}, "DEVICES='4'"), ({"DEVICES": 0}, "DEVICES=0"), ({"DEVICE_SIZE": -1}, "DEVICE_SIZE=-1"),
    ({"BS": [4096, 0]}, "BS=[4096, 0]"), ({"NUMJOBS": 4}, "NUMJOBS=4"), ({"WARMUP": "yes"}, "WARMUP='yes'"),
    ({"ON_FAILURE": "retry"}, "ON_FAILURE='retry'"), ({"CAMPAIGN": "../escape"}, "CAMPAIGN='../escape'"),
    ({"CAMPAIGN": "a/b"}, "CAMPAIGN='a/b'"), ({"RUNTIME_S": 1.5}, "RUNTIME_S=1.5"), ({"RESUME": 1}, "RESUME=1"),
])
def test_a_bad_parameter_is_named_with_its_value(given, named):
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        campaign.CampaignSpec.from_parameters(**given)


def test_every_bad_parameter_is_named_at_once():
    with pytest.raises(ConfigError) as caught:
        campaign.CampaignSpec.from_parameters(DEVICES=-1, RW=5, FILE_SIZE="big")
    assert all(name in str(caught.value) for name in ("DEVICES=-1", "RW=5", "FILE_SIZE='big'"))


@pytest.mark.parametrize("given, named", [
    ({"HOSTS": 0}, "HOSTS=0"), ({"HOSTS": [1, 0]}, "HOSTS=[1, 0]"), ({"STORAGE": ["bogus"]}, "STORAGE=['bogus']"),
    ({"LINK_BPS": -1}, "LINK_BPS=-1"), ({"LINK_BPS": 1.5e8}, "LINK_BPS=150000000.0"), ({"SUBNET": 5}, "SUBNET=5"),
    ({"REMOTE_HOSTS": ["node1"]}, "REMOTE_HOSTS=['node1']"), ({"REMOTE_HOSTS": {"name": "n1"}}, "REMOTE_HOSTS={"),
    ({"DEVICES": 0}, "DEVICES=0"), ({"BS": [0]}, "BS=[0]"), ({"CAMPAIGN": "../x"}, "CAMPAIGN='../x'"),
])
def test_a_bad_cluster_parameter_is_named_with_its_value_before_anything_is_built(monkeypatch, given, named):
    def built(*args, **kwargs):
        raise AssertionError("a part of the cluster was built before its parameters were checked")
    monkeypatch.setattr(cluster.RemoteHost, "from_mapping", built)
    monkeypatch.setattr(cluster, "ArraySpec", built)
    with pytest.raises(ConfigError, match="^parameters: " + re.escape(named)):
        cluster.ClusterSpec.from_parameters(**given)


def test_a_campaign_s_parameters_do_not_set_a_cluster_s_and_the_reverse():
    """HOSTS is the cluster's and EMULATION the campaign's: each is left alone by the other, as a notebook's own is."""
    assert campaign.CampaignSpec.from_parameters(HOSTS=0, STORAGE="bogus").name == "quickstart"
    assert cluster.ClusterSpec.from_parameters(EMULATION="bogus", MOUNT_DIR=3).name == "cluster"
    with pytest.raises(ConfigError, match="HOSTS=0"):
        parameters.check({"HOSTS": 0}, cluster.PARTS)


@pytest.mark.parametrize("name", ["../x", "a/b", "a\\b", "nul\0", ".hidden", "", "x" * 201, 5, None])
def test_a_campaign_name_is_refused_by_one_rule_however_the_spec_is_made(tmp_path, name):
    """The schema and both specs, built from parameters or directly, refuse the same names with the same words."""
    words = re.escape(f"campaign name {name!r} must be a plain, non-empty folder name")
    for make in (lambda: campaign.CampaignSpec(name), lambda: cluster.ClusterSpec(name),
                 lambda: campaign.CampaignSpec.from_parameters(CAMPAIGN=name),
                 lambda: cluster.ClusterSpec.from_parameters(CAMPAIGN=name)):
        with pytest.raises(ConfigError, match=words if isinstance(name, str) else "campaign name|CAMPAIGN="):
            make()
    for fine in ("x" * 200, "a.b", "run 1"):
        assert campaign.CampaignSpec(fine).name == cluster.ClusterSpec(fine).name == fine


@pytest.mark.parametrize("text, message", [
    ("- a\n- b\n", "a mapping"), ("campaign: [\n", "not a YAML file"), ("", "a mapping"),
    (VALID + "notebook: [x]\n", "unknown key 'notebook' \\(did you mean 'notebooks'\\?\\)"),
    (VALID.replace("campaign: t", "campaign: ../t"), "campaign: campaign name '../t' must be a plain"),
    (VALID.replace("DEVICES: 2", "HOSTS: [1, 0]"), "parameters: HOSTS=\\[1, 0\\]"),
    (VALID + "notebook_parameters: {quickstart: {STORAGE: [bogus]}}\n", "STORAGE=\\['bogus'\\]"),
    (VALID.replace("DEVICES: 2", "DEVICES: -2"), "parameters: DEVICES=-2"),
    (VALID + "notebook_parameters: {quickstart: {BS: [0]}}\n", "notebook_parameters.quickstart: BS=\\[0\\]"),
])
def test_a_bad_campaign_file_is_refused_naming_what(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        execute.load_campaign(write(tmp_path, text))


def test_a_cluster_notebook_is_checked_by_the_clusters_parameters_and_a_campaigns_by_its_own():
    assert execute.parts_of({"HOSTS": "[1, 2]", "DEVICES": "2"}) is cluster.PARTS
    assert execute.parts_of({"LAYOUTS": "['single']", "DEVICES": "2"}) is campaign.PARTS


def test_a_cluster_campaign_file_with_a_bad_host_count_is_refused_before_a_notebook_runs(tmp_path):
    path = write(tmp_path, "campaign: c\nnotebooks: [10_cluster]\nparameters: {HOSTS: [2, -1]}\n")
    with pytest.raises(ConfigError, match="HOSTS=\\[2, -1\\]"):
        execute.run_campaign(path, reports_dir=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_an_undeclared_parameter_is_named_with_the_closest_declared_one(tmp_path):
    path = write(tmp_path, VALID.replace("DEVICES: 2", "NUMJOB: [1]"))
    with pytest.raises(ConfigError, match="no parameter 'NUMJOB' \\(did you mean 'NUMJOBS'\\?\\)"):
        execute.run_campaign(path, reports_dir=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_a_torn_last_line_is_dropped_with_a_message_and_a_torn_middle_line_is_an_error(tmp_path):
    results.append_rows(tmp_path, [{"a": 1}, {"a": 2}])
    with open(tmp_path / results.ROWS_FILE, "a") as fh:
        fh.write('{"a": 3, "b')
    rows, torn = results.read_rows(tmp_path)
    assert rows == [{"a": 1}, {"a": 2}] and "torn" in torn and '{"a": 3' in torn
    assert results.drop_torn_line(tmp_path) == torn and results.read_rows(tmp_path) == (rows, None)
    (tmp_path / results.ROWS_FILE).write_text('{"a": 1}\n{"a"\n{"a": 2}\n')
    with pytest.raises(FlashscaleError, match="line 2 is not a row"):
        results.read_rows(tmp_path)


def test_a_failed_run_is_a_row_with_fios_message_and_the_sweep_goes_on_or_stops(tmp_path):
    """Real fio, told to use an I/O engine that does not exist: every run fails; continue keeps each as a failed
    row, stop keeps the first and raises."""
    base = campaign.CampaignSpec.from_parameters(CAMPAIGN="f", DATA_DIR=str(tmp_path), EMULATION="directory",
                                                 LAYOUTS=["single"], RW=["write"], NUMJOBS=[1, 2], REPETITIONS=1,
                                                 RUNTIME_S=1, RAMP_S=0, FILE_SIZE=2**20, PRECONDITION=False)
    broken = lambda spec: replace(spec, sweep=replace(spec.sweep, ioengine="no-such-engine"))
    result = campaign.run(broken(base), progress=False)
    table = result.table
    assert list(table["status"]) == ["failed", "failed"] and table["bw_bytes"].isna().all()
    assert table["error"].str.contains("no-such-engine").all()
    assert sum(note.startswith("Failed run: single") for note in result.notes) == 2
    with pytest.raises(FlashscaleError, match="no measured rows"):
        analysis.measured(table)
    with pytest.raises(FlashscaleError, match="ON_FAILURE is stop"):
        campaign.run(broken(replace(base, on_failure="stop")), progress=False)
    assert len(results.read_rows(tmp_path / "f")[0]) == 1


@pytest.mark.root
def test_a_device_bigger_than_the_backing_directory_is_refused_before_anything_is_made(tmp_path):
    spec = campaign.CampaignSpec.from_parameters(CAMPAIGN="big", DATA_DIR=str(tmp_path / "data"),
                                                 BACKING_DIR=str(tmp_path), DEVICE_SIZE=2**50, LAYOUTS=["single"])
    with pytest.raises(ConfigError, match=f"DEVICE_SIZE={2**50} is more than the .* bytes free in {tmp_path}"):
        campaign.run(spec, progress=False)
    assert loop_devices_backed_under(tmp_path) == [] and not (tmp_path / "data").exists()


@pytest.mark.root
def test_a_full_results_disk_is_named_and_keeps_every_row_written(tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    runner = Runner()
    runner.run(["mount", "-t", "tmpfs", "-o", "size=64k", "flashscale-test", str(small)])
    try:
        written = 0
        with pytest.raises(FlashscaleError, match=f"cannot write results in {small}: the disk is full"):
            while written < 10_000:
                results.append_rows(small, [{"row": written, "pad": "x" * 1000}])
                written += 1
        rows, torn = results.read_rows(small)
        assert torn is None and [r["row"] for r in rows] == list(range(written)) and written > 10
    finally:
        runner.run(["umount", str(small)])


# Rules: what one parameter needs of another for a notebook's report, refused when the campaign loads (issue 23).
RUNNER_FILES = sorted((ROOT / "runners").glob("*.yaml"))
BROKEN = [  # notebook, parameters that break one rule, what the refusal names
    ("quickstart", {"LAYOUTS": ["single"]}, ["REFERENCE='jbod'", "LAYOUTS=['single']"]),
    ("03_layout_tax", {"REFERENCE": "ext4"}, ["REFERENCE='ext4'", "LAYOUTS=['jbod', 'btrfs-raid0'"]),
    ("quickstart", {"BS": [4096]}, ["BASELINE_BS=1048576", "BS=[4096]"]),
    ("01_baseline", {"BASELINE_BS": 65536}, ["BASELINE_BS=65536", "BS=[4096, 1048576]"]),
    ("02_scaling", {"BS": [131072]}, ["BASELINE_BS=1048576", "BS=[131072]"]),
    ("03_layout_tax", {"DEVICES": 1, "LAYOUTS": ["jbod", "md-raid0"]}, ["LAYOUTS=['jbod', 'md-raid0']", "DEVICES=1"]),
    ("06_shared_file", {"DEVICES": 1, "LAYOUTS": ["btrfs-raid10"]}, ["LAYOUTS=['btrfs-raid10']", "DEVICES=1"]),
    ("03_layout_tax", {"TESTBED": "testbed.yaml", "USE_DEVICES": 1, "LAYOUTS": ["jbod", "md-imsm-raid0"]},
     ["md-imsm-raid0 needs at least 2", "USE_DEVICES=1"]),
    ("04_latency_iops", {"LAYOUT": "md-raid0", "DEVICES": 1}, ["LAYOUT='md-raid0'", "DEVICES=1"]),
    ("quickstart", {"DEVICES": 1, "LAYOUTS": ["single", "jbod"]}, ["REFERENCE='jbod'", "DEVICES=1"]),
    ("quickstart", {"REFERENCE": "single"}, ["REFERENCE='single'", "DEVICES=4"]),
    ("11_job_file", {"LAYOUTS": ["single", "btrfs-raid0"]}, ["REFERENCE='jbod'", "LAYOUTS=['single', 'btrfs-raid0']"]),
    ("11_job_file", {"TAX_MARGIN": 2}, ["TAX_MARGIN=2"]),
    ("10_cluster", {"HOSTS": [1, 3], "REMOTE_HOSTS": [{"name": "a", "address": "10.0.0.1", "mount_dir": "/m"}]},
     ["HOSTS=[1, 3]", "REMOTE_HOSTS names 1"]),
]


def campaign_of(notebook: str, **given) -> dict:
    """A loaded campaign (as ``execute.load_campaign`` returns it) of one notebook given ``given``."""
    return {"campaign": "rules", "description": "", "notebooks": [notebook], "parameters": given,
            "notebook_parameters": {}}


def notebook_cell(notebook: str) -> dict:
    from test_parameters import parameters_cell
    return parameters_cell(ROOT / "notebooks" / f"{notebook}.ipynb")


@pytest.mark.parametrize("notebook, given, named", BROKEN, ids=[f"{nb}:{','.join(g)}" for nb, g, _ in BROKEN])
def test_a_campaign_its_notebook_could_not_report_is_refused_when_it_loads_naming_each_parameter(notebook, given,
                                                                                                 named):
    """With the values the notebook's parameters cell gives for what the campaign does not set; and the same rule,
    the same words, when the notebook builds its spec run by hand (all its UPPER_CASE globals)."""
    with pytest.raises(ConfigError) as loading:
        execute.notebook_parameters(campaign_of(notebook, **given), ROOT)
    assert str(loading.value).startswith(f"{notebook}.ipynb: ") and all(n in str(loading.value) for n in named)
    spec_class = cluster.ClusterSpec if notebook == "10_cluster" else campaign.CampaignSpec
    with pytest.raises(ConfigError) as running:  # a TESTBED need not exist: the rules refuse before it is read
        spec_class.from_parameters(**{**notebook_cell(notebook), **given})
    assert str(running.value).removeprefix("parameters: ") == str(loading.value).removeprefix(f"{notebook}.ipynb: ")


def test_every_broken_rule_is_named_at_once():
    with pytest.raises(ConfigError) as caught:
        campaign.CampaignSpec.from_parameters(REFERENCE="jbod", LAYOUTS=["single", "md-raid0"], DEVICES=1,
                                              BASELINE_BS=4096, BS=[65536], TAX_MARGIN=-0.1)
    said = str(caught.value)
    assert all(f"{name}=" in said for name in ("REFERENCE", "LAYOUTS", "DEVICES", "BASELINE_BS", "BS", "TAX_MARGIN"))
    assert said.count("; ") >= 4 and "md-raid0 needs at least 2" in said


def test_a_rule_holds_only_a_notebook_that_declares_every_parameter_it_reads():
    campaign.CampaignSpec.from_parameters(LAYOUTS=["single"])  # no REFERENCE: a notebook without a tax
    campaign.CampaignSpec.from_parameters(BASELINE_BS=4096)    # no BS given: the sweep's default is not the notebook's
    campaign_names = parameters.model(campaign.PARTS).model_fields  # HOSTS is a cluster's: not checked as a campaign's
    assert rules.rule_problems({"HOSTS": [9], "REMOTE_HOSTS": [{}]}, campaign_names) == []
    assert rules.rule_problems({"LAYOUTS": ["md-raid0"], "DEVICES": 1, "TESTBED": "bed.yaml"}, ["LAYOUTS",
                                    "DEVICES", "TESTBED"]) == []  # a test bed's count is known when it is read
    execute.notebook_parameters(campaign_of("05_metadata", LAYOUT="lvm-striped", DEVICES=1), ROOT)  # one will do


@pytest.mark.parametrize("path", RUNNER_FILES, ids=lambda p: p.name)
def test_every_shipped_campaign_file_still_loads(path):
    loaded = execute.load_campaign(path)
    checked = execute.notebook_parameters(loaded, ROOT)
    assert [nb.stem for nb in checked] == list(dict.fromkeys(loaded["notebooks"]))


@settings(max_examples=60, deadline=None)
@given(layouts=st.lists(st.sampled_from(["single", "jbod", "btrfs-raid0", "btrfs-raid10", "md-raid0",
                                         "md-imsm-raid0", "lvm-striped"]), min_size=1, unique=True),
       devices=st.integers(1, 8), bs=st.lists(st.sampled_from([4096, 65536, 1048576]), min_size=1, unique=True),
       data=st.data())
def test_a_campaign_that_keeps_the_rules_loads_and_one_that_breaks_one_is_refused_by_name(layouts, devices, bs,
                                                                                          data):
    arrays = [name for name in layouts if name != "single"]
    needs = max((rules.MIN_DEVICES.get(name, (1,))[0] for name in layouts), default=1)
    valid = bool(arrays) and devices >= max(needs, 2)
    reference = data.draw(st.sampled_from(arrays)) if arrays else "jbod"
    given = {"LAYOUTS": layouts, "DEVICES": devices, "BS": bs, "BASELINE_BS": data.draw(st.sampled_from(bs)),
             "REFERENCE": reference}
    if valid:
        execute.notebook_parameters(campaign_of("quickstart", **given), ROOT)
        elsewhere = data.draw(st.sampled_from([b for b in (512, 4096, 65536, 1048576) if b not in bs]))
        with pytest.raises(ConfigError, match=rf"BASELINE_BS={elsewhere} is not among BS="):
            execute.notebook_parameters(campaign_of("quickstart", **{**given, "BASELINE_BS": elsewhere}), ROOT)
    else:
        with pytest.raises(ConfigError, match="REFERENCE=|DEVICES="):
            execute.notebook_parameters(campaign_of("quickstart", **given), ROOT)


def test_the_quickstart_without_its_reference_is_refused_in_seconds_before_any_notebook_runs(tmp_path, capsys,
                                                                                             monkeypatch):
    import time

    import papermill
    from flashscale import cli

    def ran(*args, **kwargs):
        raise AssertionError("a notebook ran: the campaign measured before it was refused")
    monkeypatch.setattr(papermill, "execute_notebook", ran)
    started = time.monotonic()
    status = cli.main(["run", str(ROOT / "runners" / "quickstart.yaml"), "-p", "LAYOUTS=[single]",
                       "--reports", str(tmp_path / "reports")])
    assert status == 1 and time.monotonic() - started < 10
    assert ("flashscale run: error: quickstart.ipynb: REFERENCE='jbod' is not among LAYOUTS=['single']: the tax is "
            "measured against the reference layout; add it to LAYOUTS or pick one of them") in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()


def test_a_study_s_plans_of_unbuildable_layouts_are_not_held_to_its_reference():
    """03_layout_tax prints the plans of what this machine cannot build from a spec of one layout, never run."""
    import pandas as pd
    from flashscale.notebooks import studies

    cell = notebook_cell("03_layout_tax")
    unbuildable = pd.DataFrame({"layout": cell["LAYOUTS"], "supported": False})
    assert "mdadm --create" in studies.unsupported_plans(unbuildable, cell)
