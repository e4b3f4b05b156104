"""The study notebooks 05_metadata and 06_shared_file run by ``flashscale run`` in one shared results directory
with tiny parameters (then 08_compare over them), their recorded numbers checked against fio's own raw output and
against the emulated array's caps; and both notebooks on plain directories."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import reader
from flashscale import cli
from flashscale.publish import report

pytestmark = pytest.mark.long  # a whole study's notebooks: make test-long (CI runs it)

CAP = 100_000_000
MIB = 2**20
ARRAY = dict(DEVICES=2, DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, PROGRESS=False)
METADATA = dict(NRFILES=[500, 2000], NUMJOBS=[2])
SHARED = dict(LAYOUTS=["jbod", "btrfs-raid0"], NUMJOBS=[2], FILE_SIZE=64 * MIB)
OPS = ("create", "stat", "remove")


def run_study(tmp: Path, notebooks: list[str], per_notebook: dict) -> tuple[Path, dict]:
    path = tmp / "tiny.yaml"
    path.write_text(yaml.safe_dump({"campaign": "tiny", "notebooks": notebooks,
                                    "parameters": {"DATA_DIR": str(tmp / "data")},
                                    "notebook_parameters": per_notebook}))
    assert cli.main(["run", str(path), "--reports", str(tmp / "reports")]) == 0
    out = tmp / "reports" / "tiny"
    return out, {name: report.read_record(out / f"{name}.ipynb") for name in notebooks}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """05 and 06 on 2 emulated devices capped at 100 MB/s, then 08 over the study: 6 metadata runs and 8 runs of
    64 MiB per job."""
    tmp = tmp_path_factory.mktemp("metastudy")
    out, numbers = run_study(tmp, ["05_metadata", "06_shared_file", "08_compare"],
                             {"05_metadata": {**ARRAY, **METADATA}, "06_shared_file": {**ARRAY, **SHARED}})
    return tmp, out, numbers


def _raw_runs(stage_dir: Path) -> dict[str, dict]:
    """Every raw run's fio.json under a stage, by its point."""
    return {p.parent.parent.name: json.loads(p.read_text()) for p in stage_dir.glob("**/raw/*/*/rep*/fio.json")}


@pytest.mark.root
@pytest.mark.notebook
def test_metadata_counts_every_file_and_its_rates_are_fios_own(study):
    tmp, out, numbers = study
    five = numbers["05_metadata"]
    assert five["backend"] == "loop" and five["notes"] == [] and five["runs"] == 6
    raw = _raw_runs(tmp / "data" / "tiny" / "05_metadata")
    engines = {"create": "filecreate", "stat": "filestat", "remove": "filedelete"}
    for op in OPS:
        for nrfiles in METADATA["NRFILES"]:
            key = f"single/{op}/nj2/{2 * nrfiles}"
            assert five["files"][key] == 2 * nrfiles and five["complete"][key] is True
            data = raw[f"{engines[op]}-bs4096-nj2-qd1-files{nrfiles}"]
            assert data["global options"]["nrfiles"] == str(nrfiles)
            side = data["jobs"][0]["write" if op != "stat" else "read"]
            assert side["total_ios"] == side["clat_ns"]["N"] == 2 * nrfiles  # fio counted exactly the files
            assert side["runtime"] > 0 and five["runtime_ms"][key] == side["runtime"]
            if side["runtime"] < 1000:  # too fast to measure at this size: no rate, anywhere
                assert five["too_short"][key] is True and five["rate"][key] is None
                continue
            assert five["too_short"][key] is False
            assert five["rate"][key] == pytest.approx(side["total_ios"] / (side["runtime"] / 1000), rel=1e-6)
            assert five["latency_rate"][key] >= five["rate"][key]  # the operation alone is never slower
    assert set(five["headline"]) == {f"{op}s/s (4,000 files)" for op in OPS}
    html = (out / "05_metadata.html").read_text()
    assert "Every run operated on exactly its files" in html and html.count("<img") >= 1
    for op in OPS:  # the headline's runs: a rate only when timed
        key, said = f"single/{op}/nj2/4000", five["headline"][f"{op}s/s (4,000 files)"]
        assert (said == "too fast to measure at this size") == five["too_short"][key]
        if five["too_short"][key]:
            assert "too fast to measure at this size" in html


@pytest.mark.root
@pytest.mark.notebook
def test_shared_file_moves_its_bytes_and_stays_under_the_caps_of_the_devices_it_reaches(study):
    _, out, numbers = study
    six = numbers["06_shared_file"]
    assert six["backend"] == "loop" and six["notes"] == [] and six["runs"] == 8 and six["unsupported"] == {}
    for mode in ("n-to-n", "n-to-1"):
        for key, expected in six["expected_bytes"][mode].items():
            assert expected == 2 * 64 * MIB and six["bytes_ok"][mode][key] is True
    for key, ok in {**six["within_caps"]["n-to-n"], **six["within_caps"]["n-to-1"]}.items():
        if key.startswith("jbod") or "/read/" in key:  # btrfs turns direct writes into buffered ones (README)
            assert ok, key
    for rw in ("read", "write"):  # jbod: the shared file lives on one device, a file per job on both
        assert six["reach_devices"]["n-to-1"][f"jbod/{rw}/nj2"] == 1
        assert six["bw_bytes"]["n-to-1"][f"jbod/{rw}/nj2"] <= 1.15 * CAP
        assert six["bw_bytes"]["n-to-n"][f"jbod/{rw}/nj2"] >= 1.5 * CAP
        assert six["ratio"][f"jbod/{rw}/nj2"] < 0.6
    for mode in ("n-to-n", "n-to-1"):  # btrfs-raid0 stripes even the shared file over both devices
        assert 1.5 * CAP <= six["bw_bytes"][mode]["btrfs-raid0/read/nj2"] <= 2 * 1.15 * CAP
        assert six["fraction"][mode]["jbod/read/nj2"] <= 1.15
    assert "N-to-1 jbod read" in six["headline"]
    html = (out / "06_shared_file.html").read_text()
    assert "Every run moved exactly numjobs x size bytes" in html and "shared_file." not in html


@pytest.mark.root
@pytest.mark.notebook
def test_no_shared_file_run_is_above_its_truth_and_the_notebook_says_so(study):
    from flashscale.analysis import baseline_and_tax

    tmp, out, _ = study
    stage = tmp / "data" / "tiny" / "06_shared_file"
    runs = pd.concat([pd.read_parquet(p) for p in sorted(stage.glob("**/results.parquet"))])
    assert len(runs) and baseline_and_tax.runs(runs)["truth_bw_bytes"].notna().all()
    assert baseline_and_tax.truth_check(runs).empty
    assert "Every run within its known cap" in (out / "06_shared_file.html").read_text()


@pytest.mark.root
@pytest.mark.notebook
def test_compare_reads_the_metadata_and_shared_file_stages(study):
    _, out, numbers = study
    eight = numbers["08_compare"]
    assert {"tiny/05_metadata", "tiny/06_shared_file/n-to-n", "tiny/06_shared_file/n-to-1"} <= set(eight["sources"])
    index = (out / "index.html").read_text()
    assert 'href="05_metadata.html"' in index and "creates/s" in index and "N-to-1 jbod read" in index


@pytest.mark.root
@pytest.mark.notebook
def test_the_metadata_and_shared_file_reports_read_well_in_a_browser(study):
    """The study's other reports (test_studies reads 01-04, 07, 08): no JSON blob, no e-notation, no legend over
    data, no stderr, every figure with its alt text (``reader``)."""
    _, out, _ = study
    with reader.chromium() as browser:
        problems, images = reader.read_campaign(browser, out / "index.html")
    assert problems == {}
    assert images >= 2


@pytest.mark.notebook
def test_both_notebooks_on_plain_directories_say_so_and_still_count(tmp_path):
    _, numbers = run_study(tmp_path, ["05_metadata", "06_shared_file"], {
        "05_metadata": {"EMULATION": "directory", "NRFILES": [300], "PROGRESS": False},
        "06_shared_file": {"EMULATION": "directory", "LAYOUTS": ["single", "btrfs-raid0"], "RW": ["write"],
                           "FILE_SIZE": 8 * MIB, "PROGRESS": False}})
    five, six = numbers["05_metadata"], numbers["06_shared_file"]
    assert five["backend"] == six["backend"] == "directory"
    assert any("plain directories" in note for note in five["notes"])
    assert all(five["complete"].values()) and len(five["rate"]) == 3
    assert set(six["unsupported"]) == {"btrfs-raid0"}
    assert six["bytes_ok"] == {"n-to-1": {"single/write/nj2": True}, "n-to-n": {"single/write/nj2": True}}
    assert six["ceiling_bytes"]["n-to-1"]["single/write/nj2"] is None  # no caps on plain directories
