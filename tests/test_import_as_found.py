"""flashscale import on fio output as users keep it (tests/golden/as_found, real fio 3.33): json+, json and normal
in one file, runs appended to one file, a wrapper's text around the JSON, any file name or none, jobs spread over a
``filename`` or ``directory`` list. The known truths: each row's bandwidth is fio's own bytes over its own runtime
(read here from the JSON with the json module alone), and its device count the names its job file lists."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.measure import results
from flashscale.errors import FioError
from flashscale.measure.fio_import import checks, derived, documents, importer, targets, versions
from flashscale.measure.fio_import.file_names import Naming, read_map

AS_FOUND = Path(__file__).parent / "golden" / "as_found"
OPENING = re.compile(r'^\{\n\s*"fio version"', re.MULTILINE)
TARGET_LINE = re.compile(r"^(?:filename|directory)=(.*)$", re.MULTILINE)
# The job file(s) of each output: <stem>.fio, the hand-edited 3.35 copy its 3.33 original's, an appended run its own
JOB_FILES = {"fio335_spread4.output": ["spread4_jsonplus.fio"],
             "scaling_appended": ["scaling_1.fio", "scaling_2.fio", "scaling_3.fio"]}
RUN_OF = {"status_stonewalled.json": [2]}  # its one run is its last report: output 0 is fio's third document
OUTPUTS = 12  # the files of fio's output in the folder (README.md)
MAP = '- {match: "*/sections_grouped.json", devices: 3}  # fio echoes only its last section\'s targets\n'


def fio_outputs(path: Path) -> list[dict]:
    """Every JSON document fio wrote into ``path``, found by fio's own opening and read by the json module."""
    text = path.read_text()
    return [json.JSONDecoder().raw_decode(text, found.start())[0] for found in OPENING.finditer(text)]


def truth(output: dict, group: int) -> float:
    """A reporting group's bandwidth from fio's own counts: its jobs' bytes over the longest runtime, bytes/s."""
    jobs = [job for job in output["jobs"] if job["groupid"] == group]
    moved = sum(job[side]["io_bytes"] for job in jobs for side in ("read", "write"))
    return moved / (max(job[side]["runtime"] for job in jobs for side in ("read", "write")) / 1000)


def devices_listed(job_file: Path) -> int:
    """The files a job file lists in its filename or directory options (fio's ':' list, ``\\:`` escaped)."""
    names = {name for listed in TARGET_LINE.findall(job_file.read_text())
             for name in re.split(r"(?<!\\):", listed) if name}
    return len(names)


def naming(folder: Path) -> Naming:
    """The layout of every file, and the map for the one file that cannot say its device count."""
    (folder / "map.yaml").write_text(MAP)
    return Naming(rules=tuple(read_map(folder / "map.yaml")), given={"layout": "jbod"})


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[object, importer.Summary]:
    """The folder imported as it is, naming only its layout: (its table, what the import did)."""
    out = tmp_path_factory.mktemp("as_found") / "imported"
    summary = importer.run_import([str(AS_FOUND)], out, naming(out.parent))
    return results.load(out), summary


def test_every_output_as_found_imports_with_its_bandwidth_its_bytes_over_its_runtime(imported):
    table, summary = imported
    assert not summary.refused and summary.line() == (
        f"{OUTPUTS} files: {OUTPUTS} imported (15 rows) (left aside: 13 fio job files, 2 text not fio's output (by "
        "their content))")
    assert set(table["status"]) == {"ok"}
    worst = 0.0
    for (source, output, group), rows in table.groupby(["source_file", "source_output", "source_group"]):
        document = RUN_OF.get(Path(source).name, range(output + 1))[output]
        expected = truth(fio_outputs(Path(source))[document], group)
        (bw,) = rows["bw_bytes"]
        assert bw == pytest.approx(expected, rel=0.01), (source, output)
        worst = max(worst, abs(bw / expected - 1))
    assert worst < 1e-6  # measured at this commit: 1.2e-8 (fio's bw_bytes is 1000 x bytes // ms, rounded down)
    assert sorted({Path(p).name for p in table["source_file"]}) == sorted(
        p.name for p in AS_FOUND.iterdir() if p.suffix not in (".fio", ".md", ".py"))


def test_a_folder_s_files_named_one_by_one_import_as_the_folder_does(imported, tmp_path):
    """``flashscale import results/*``: the shell names every file, job files and notes among them; they are left
    aside by their content as the folder's are, not refused."""
    table, summary = imported
    named = importer.run_import(sorted(str(p) for p in AS_FOUND.iterdir()), tmp_path / "out", naming(tmp_path))
    assert named.line() == summary.line() and not named.refused
    assert results.load(tmp_path / "out")["bw_bytes"].tolist() == table["bw_bytes"].tolist()


def test_each_row_s_device_count_is_the_files_its_job_lists(imported):
    table, _ = imported
    for (source, output), rows in table.groupby(["source_file", "source_output"]):
        name = Path(source).name
        job = JOB_FILES.get(name, [f"{name.split('.')[0]}.fio"])[output]
        assert set(rows["devices"]) == {devices_listed(AS_FOUND / job)}, (name, output)
        assert ("devices: " in rows["read_from"].iloc[0]) is (name != "sections_grouped.json")  # the map's there
    assert sorted(table.loc[table["source_file"].str.endswith("scaling_appended"), "devices"]) == [1, 2, 3]
    escaped = table[table["source_file"].str.endswith("escaped_colon.json")].iloc[0]
    assert escaped["devices"] == 2 and escaped["target"] == "odd\\:name:plain"  # 'odd:name' is one file


def test_reports_of_a_run_whose_second_group_began_after_the_first_report_are_one_run(imported):
    """--status-interval=1 over two stonewalled groups: the first report has the second group's jobs not yet begun
    (runtime 0), the next has them begun less than the interval before; three reports, one run, the last."""
    table, summary = imported
    (outcome,) = [o for o in summary.outcomes if o.path.endswith("status_stonewalled.json")]
    assert "the last of 3 reports fio wrote of one run as it ran" in " ".join(outcome.said)
    rows = table[table["source_file"] == outcome.path]
    assert sorted(rows["rw"]) == ["randrw", "randwrite"] and set(rows["source_output"]) == {0}
    assert len(fio_outputs(Path(outcome.path))) == 3


def test_fio_3_35_is_read_as_fio_3_33_is(imported):
    table, _ = imported
    by_name = {Path(p).name: row for p, row in zip(table["source_file"], table.to_dict("records"))}
    new, old = by_name["fio335_spread4.output"], by_name["spread4_jsonplus.output"]
    assert new["fio_version"] == "fio-3.35" and old["fio_version"] == "fio-3.33"
    same = ["bw_bytes", "iops", "io_bytes", "runtime_s", "clat_p99_ns", "rw", "bs", "numjobs", "devices", "iodepth"]
    assert {k: new[k] for k in same} == {k: old[k] for k in same}


def test_a_job_s_own_block_size_bounds_its_i_os(imported):
    """128-byte reads are real (a network file system's): the plausibility check allows the job's own bs, where
    512 bytes an I/O refused them; a unit misread (bytes counted in KiB) is refused still."""
    table, _ = imported
    tiny = table[table["bs"] == 128].iloc[0].to_dict()
    assert tiny["status"] == "ok" and tiny["iops"] * tiny["runtime_s"] * 128 == pytest.approx(tiny["io_bytes"],
                                                                                             rel=0.01)
    assert checks.impossible(tiny) is None
    assert "at 512 bytes an I/O" in checks.impossible({**tiny, "bs": 4096})  # the sector floor refused these
    kib = {**tiny, "io_bytes": tiny["io_bytes"] / 1024, "bw_bytes": tiny["bw_bytes"] / 1024}
    assert "at 128 bytes an I/O" in checks.impossible(kib)


def test_a_block_size_under_a_sector_is_derived_where_fio_echoes_no_options():
    """fio before 2.3 echoes no options: the tiny reads' bs comes from fio's own bytes over the I/Os it counted, 128,
    where only whole sectors were derived before."""
    (output,) = fio_outputs(AS_FOUND / "tiny_reads.log")
    found, how = derived.derived_run(versions.normalize(output)["jobs"])
    assert found["bs"] == 128 and how["bs"].startswith("derived: read bytes over I/Os (total_ios, counted by fio)")


@pytest.mark.parametrize("listed, count, sure", [
    ("/dev/nvme2n1:/dev/nvme3n1:/dev/nvme4n1", 3, True),
    ("/dev/nvme0n1p1:/dev/nvme0n1p2:/dev/sdb", 2, True),  # two partitions of one device: one device
    ("/dev/disk/by-id/nvme-A-part1:/dev/disk/by-id/nvme-B", 2, True),
    ("/dev/nvme0n1", 1, True),
    ("/mnt/a/f:/mnt/b/f", 2, False),
    ("a\\:b:c", 2, False),
    ("::a::b:", 2, False),  # fio skips empty names
    ("/dev/md0", None, False),
    ("/dev/nvme0n1:/dev/mapper/vg-lv", None, False),
])
def test_a_target_list_gives_its_device_count_and_how_sure_it_is(listed, count, sure):
    found, how, is_sure = targets.devices_of([{"filename": listed}])
    assert (found, is_sure) == (count, sure), how


def _as_devices(path: Path, names: list[str]) -> str:
    """``path``'s fio output with its filename list made ``names`` (a hand edit: fio here ran on files)."""
    return path.read_text().replace('"filename" : "dev0:dev1:dev2:dev3"', f'"filename" : "{":".join(names)}"')


def test_a_device_list_s_count_wins_over_devices_given_and_a_file_list_s_does_not(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    shutil.copy(AS_FOUND / "spread4_jsonplus.output", tmp_path / "in" / "files.output")
    devices = _as_devices(AS_FOUND / "spread4_jsonplus.output", [f"/dev/nvme{i}n1" for i in range(4)])
    (tmp_path / "in" / "devices.output").write_text(devices)
    assert cli.main(["import", str(tmp_path / "in"), "--to", str(tmp_path / "out"), "--layout", "jbod",
                     "--devices", "8"]) == 0
    table = results.load(tmp_path / "out")
    by_name = dict(zip(table["source_file"].map(lambda p: Path(p).name), table["devices"]))
    assert by_name == {"files.output": 8, "devices.output": 4}
    err = capsys.readouterr().err
    assert "the name says devices=8, the file devices=4: the file's is kept" in err
    assert "the file's is only inferred, the name's is kept" in err


def test_a_refusal_many_files_share_is_said_once_with_their_count(tmp_path, capsys):
    pattern = "{layout}/{devices}/{rw}-{iodepth}.json"
    assert cli.main(["import", str(AS_FOUND), "--to", str(tmp_path / "out"), "--pattern", pattern]) == 3
    said = capsys.readouterr()
    refused = [line for line in said.err.splitlines() if line.startswith("refused ")]
    assert len(refused) == 1 and refused[0].startswith(f"refused {OUTPUTS} files (")
    assert refused[0].endswith(f"and {OUTPUTS - 3} more): its path does not fit --pattern {pattern!r}")
    assert f"{OUTPUTS} refused: {OUTPUTS} files (" in said.out and "; ;" not in said.out + said.err
    assert not (tmp_path / "out").exists()


def test_a_folder_without_fio_output_is_an_error_and_nothing_is_written(tmp_path, capsys):
    bag = tmp_path / "jobs"
    bag.mkdir()
    for job in AS_FOUND.glob("*.fio"):
        shutil.copy(job, bag / job.name)
    (bag / "notes.txt").write_text("ran on lab7\n")
    assert cli.main(["import", str(bag), "--to", str(tmp_path / "out"), "--layout", "jbod"]) == 1
    err = capsys.readouterr().err
    assert f"no fio output in {bag}: nothing imported, nothing written (left aside: 13 fio job files, 1 text not " \
           "fio's output (by their content))" in err
    (tmp_path / "none").mkdir()
    assert cli.main(["import", str(tmp_path / "none"), "--to", str(tmp_path / "out"), "--layout", "jbod"]) == 1
    assert "nothing written (no file in it)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_wrapper_s_own_json_beside_fio_s_is_said_and_fio_s_read(tmp_path, capsys):
    text = (AS_FOUND / "wrapped_run.txt").read_text()
    (tmp_path / "run.log").write_text('{"host": "lab7", "script": "bench.sh"}\n{run 1 of 3}\n' + text)
    summary = importer.run_import([str(tmp_path / "run.log")], tmp_path / "out", Naming(given={"layout": "jbod"}))
    (outcome,) = summary.outcomes
    assert outcome.reason is None and len(outcome.rows) == 1
    assert any("a JSON object that is not fio's output, not read (no 'fio version'; its keys: 'host', 'script')"
               in s for s in outcome.said)
    assert any("2 lines of text before fio's JSON" in s and "'{run 1 of 3}'" in s for s in outcome.said)


def test_lines_that_only_begin_like_json_are_text_and_cost_a_bounded_number_of_parses(monkeypatch):
    """A wrapper's ``{run 1 of 3}`` is text; a file crafted of such lines (each opening an array that the next line
    nests deeper) costs SKIPPED + 1 parses, not one a line, and is refused with the first one's error."""
    parsed, real = [], documents._decode
    monkeypatch.setattr(documents, "_decode", lambda text, start, source: parsed.append(start) or real(text, start,
                                                                                                      source))
    with pytest.raises(FioError, match="not valid JSON"):
        documents.documents('{"a": [1,\n' * 100_000, "crafted")
    assert len(parsed) == documents.SKIPPED + 1
