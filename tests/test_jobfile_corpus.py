"""The corpus of job files as people write them (tests/jobfiles): each is accepted and rewritten to the layout, or
refused naming the option its first line expects; fio accepts every rewrite; a dozen run on directories for real."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flashscale.measure import jobrun
from flashscale.measure.jobfile import JobFile, JobFileError
from flashscale.system.commands import Runner

CORPUS = Path(__file__).parent / "jobfiles"
FILES = sorted(CORPUS.rglob("*.fio"))
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def expectation(path: Path) -> tuple[str, str]:
    """("accepted", "") or ("refused", option), from the file's first line."""
    words = path.read_text().splitlines()[0].split()
    assert words[:2] == [";", "expect:"], f"{path} does not say what to expect"
    return words[2], (words[3] if len(words) > 3 else "")


def environment(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line.startswith("; env:")]
    return dict(pair.split("=", 1) for pair in lines[0].split(":", 1)[1].split()) if lines else {}


def read(path: Path) -> JobFile:
    return JobFile.read(path, env=environment(path))


def test_the_corpus_covers_what_people_write():
    text = "\n".join(path.read_text() for path in CORPUS.rglob("*") if path.is_file())
    for option in ("[global]", "include ", "stonewall", "new_group", "${", "rwmixread", "random_distribution",
                   "rate=", "rate_iops", "verify=", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log",
                   "ioengine=libaio", "ioengine=io_uring", "ioengine=psync", "ioengine=mmap", "rw=trim", "KiB", "ms",
                   "exec_prerun", "exec_postrun", "external:", "allow_mounted_write", "opendir", "filename=/dev/"):
        assert option in text, f"no job file in the corpus uses {option}"
    assert len([p for p in FILES if expectation(p)[0] == "accepted"]) >= 15
    assert len([p for p in FILES if expectation(p)[0] == "refused"]) >= 15


@needs_fio
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_dry_run_accepts_and_rewrites_or_refuses_naming_the_option(path, tmp_path):
    verdict, option = expectation(path)
    targets = [str(tmp_path / "t0"), str(tmp_path / "t1")]
    if verdict == "refused":
        with pytest.raises(JobFileError) as refused:
            read(path).rewrite(targets, tmp_path / "raw")
        assert refused.value.refusals[0].option == option and refused.value.refusals[0].line >= 1
        return
    text = read(path).rewrite(targets, tmp_path / "raw", {"iodepth": 2})
    jobrun.accepted_by_fio(text, Runner())  # fio reads it: CommandError otherwise
    assert f"={targets[0]}:{targets[1]}" in text or f"={targets[1]}:{targets[0]}" in text


RUN_ON_DIRECTORIES = ("basic_randread", "sections_global", "including", "stonewall_groups", "env_vars", "suffixes",
                      "rwmix", "distributions", "rate_limits", "verify", "logs", "engines", "shared_file", "metadata",
                      "spelling", "multiple_globals")


@needs_fio
@pytest.mark.parametrize("name", RUN_ON_DIRECTORIES)
def test_a_real_run_on_directories_lands_one_sane_row_per_group(name, tmp_path):
    targets = [tmp_path / "t0", tmp_path / "t1"]
    for target in targets:
        target.mkdir()
    jobfile = read(CORPUS / f"{name}.fio")
    rows = jobrun.run(jobfile, [str(t) for t in targets], tmp_path / "raw", Runner())
    assert [row["group"] for row in rows] == [group[0] for group in jobfile.groups()]
    for row in rows:
        assert row["io_bytes"] > 0 and row["bw_bytes"] > 0 and row["runtime_s"] > 0
        assert row["job_file_sha256"] == jobfile.sha256 and row["job_file"].endswith(f"{name}.fio")
        assert row["bw_bytes"] == pytest.approx(row["read_bw_bytes"] + row["write_bw_bytes"])
    written = {p.parent for p in tmp_path.rglob("*") if p.is_file()}
    assert written <= {tmp_path / "raw", *targets}  # nothing anywhere but the run's folder and the targets
    assert any(t.iterdir() for t in targets) or name == "metadata"  # metadata removes its files (unlink=1)


@needs_fio
def test_logs_land_in_the_run_folder_and_swept_numjobs_spreads_over_both_targets(tmp_path):
    targets = [tmp_path / "t0", tmp_path / "t1"]
    for target in targets:
        target.mkdir()
    rows = jobrun.run(read(CORPUS / "logs.fio"), [str(t) for t in targets], tmp_path / "raw", Runner(),
                      overrides={"numjobs": 2})
    assert rows[0]["numjobs"] == 4
    logs = sorted(p.name for p in (tmp_path / "raw").glob("*.log"))
    assert any(n.startswith("global.logged-read_bw") for n in logs) and any(n.startswith("lat_clat") for n in logs)
    assert any(n.startswith("hist_clat_hist") for n in logs) and any(n.startswith("iops_iops") for n in logs)
    assert all(len(list(t.iterdir())) == 2 for t in targets)  # each section's two clones: one on each target
