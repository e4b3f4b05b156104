"""Bad input is refused as a whole, before anything is touched, naming the field and the value (issue 11)."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from flashscale import campaign, cluster, execute, parameters
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
    assert {"HOSTS", "STORAGE", "LINK_BPS", "SUBNET", "REMOTE_HOSTS"} == ours["cluster"] - ours["campaign"]
    assert cluster.PARTS["spec"] is cluster.ClusterSpec and "LAYOUTS" not in ours["cluster"]
    fields = parameters.model(campaign.PARTS).model_fields
    assert fields["DEVICES"].default == campaign.ArraySpec().devices
    assert fields["NUMJOBS"].default == campaign.Sweep().numjobs
    assert fields["ON_FAILURE"].default == "continue" and fields["RESUME"].default is False
    assert all(info.description for info in fields.values())


def test_the_readme_lists_the_parameters_as_the_schema_says():
    assert parameters.markdown(campaign.PARTS) in (ROOT / "README.md").read_text()


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
    """HOSTS is the cluster's and LAYOUTS the campaign's: each is left alone by the other, as a notebook's own is."""
    assert campaign.CampaignSpec.from_parameters(HOSTS=0, STORAGE="bogus").name == "quickstart"
    assert cluster.ClusterSpec.from_parameters(LAYOUTS=["raid5"], FS=3).name == "cluster"
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
