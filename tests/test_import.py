"""flashscale import on fio output real fio wrote (tests/golden, tests/golden/imported): every file named with what
it gave, bad files refused by name while the rest are imported, the user's files never written, the same import
twice the same table, names read by pattern and map with the file winning, and the folder every command reads."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale import cli
from flashscale.errors import ConfigError, RefusedError
from flashscale.analysis import baseline_and_tax, latency
from flashscale.measure import campaign_folder, fio_client, fio_output, raw, results
from flashscale.measure.fio_import import importer, reader
from flashscale.measure.fio_import.file_names import Naming, compile_pattern

from conftest import sha256

GOLDEN = Path(__file__).parent / "golden"
IMPORTED = GOLDEN / "imported"
BENCHFIO = IMPORTED / "benchfio"
BENCHFIO_PATTERN = "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json"


def hashes(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``folder``: its SHA-256 and modification time."""
    return {str(p.relative_to(folder)): (sha256(p), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def mixed_bag(tmp_path) -> Path:
    """A user's folder: a good run, a failed job, an empty file, a truncated file, a JSON file not fio's, fio's
    normal text output that does not say what ran, and fio's bandwidth log (the empty file, the JSON not fio's and
    the log are left aside by their content)."""
    bag = tmp_path / "results"
    bag.mkdir()
    shutil.copy(GOLDEN / "write_1target.json", bag / "good.json")
    shutil.copy(IMPORTED / "fio333_fails.json", bag / "failed.json")
    (bag / "empty.json").write_text("")
    text = (GOLDEN / "randrw_mixed.json").read_text()
    (bag / "truncated.json").write_text(text[: len(text) // 2])
    (bag / "other.json").write_text(json.dumps({"name": "an inventory", "items": [1, 2]}))
    (bag / "normal.txt").write_text("x: (groupid=0, jobs=1): err= 0: pid=7: Thu Nov 26\n  read: IOPS=10\n")
    (bag / "bw_bw.1.log").write_text("1000, 5000, 0, 0, 0\n")
    return bag


def test_a_folder_of_bad_files_names_each_and_imports_the_rest(mixed_bag, tmp_path, capsys):
    before = hashes(mixed_bag)
    out = tmp_path / "imported"
    assert cli.main(["import", str(mixed_bag), "--to", str(out), "--layout", "single", "--devices", "1"]) == 3
    said = capsys.readouterr()
    assert said.out.startswith("4 files: 2 imported (2 rows), 1 failed job kept as a failed row, 2 refused: ")
    for name, reason in [("truncated.json", "truncated"), ("normal.txt", "neither in the file nor given")]:
        assert f"{name}: " in said.out and f"refused {mixed_bag / name}: " in said.err
        assert reason in said.err.split(f"refused {mixed_bag / name}: ")[1].splitlines()[0]
    assert "(left aside: 1 JSON not fio's, 1 empty, 1 fio's per-job logs (by their content))" in said.out
    assert "empty.json" not in said.err and "other.json" not in said.err
    table = results.load(out)
    assert sorted(table["status"]) == ["failed", "ok"]
    bad = table[table["status"] == "failed"].iloc[0]
    assert "fio reported error 1 (Operation not permitted) for job 'fails'" == bad["error"]
    assert pd.isna(bad["bw_bytes"]) and pd.isna(bad["iops"])  # a failed job is no rate, never 0
    good = table[table["status"] == "ok"].iloc[0]
    raw = json.loads((GOLDEN / "write_1target.json").read_text())["jobs"][0]["write"]
    assert good["bw_bytes"] == raw["bw_bytes"] and good["clat_p99_ns"] == raw["clat_ns"]["percentile"]["99.000000"]
    sources = importer.sources(out).set_index("path")
    assert sources.loc[str((mixed_bag / "truncated.json").resolve()), "outcome"] == "refused"
    assert str((mixed_bag / "empty.json").resolve()) not in sources.index  # left aside: not fio's, not a source
    assert sources.loc[str((mixed_bag / "good.json").resolve()), "sha256"] == sha256(mixed_bag / "good.json")
    assert sources.loc[str((mixed_bag / "good.json").resolve()), "read_from"].startswith("bw_bytes; clat_ns, lat_ns")
    notes = json.loads((out / "notes.json").read_text())
    assert any(n.startswith("2 file(s) refused, not imported: ") and "truncated.json: " in n for n in notes)
    assert hashes(mixed_bag) == before  # read, never written: contents and times as they were
    kept = out / "raw" / good["source_sha256"][:16] / "source" / "good.json"
    assert sha256(kept) == good["source_sha256"]  # the copy kept is the file imported, byte for byte


def test_the_same_import_twice_gives_the_same_table(tmp_path, capsys):
    out = tmp_path / "imported"
    argv = ["import", str(BENCHFIO), "--to", str(out), "--pattern", BENCHFIO_PATTERN, "--devices", "1"]
    assert cli.main(argv) == 0
    rows, table = (out / "rows.jsonl").read_bytes(), results.load(out)
    assert cli.main(argv) == 0
    assert "8 files: 0 imported (0 rows), 8 already in" in capsys.readouterr().out
    assert (out / "rows.jsonl").read_bytes() == rows
    pd.testing.assert_frame_equal(results.load(out), table)
    assert len(json.loads((out / "campaign.json").read_text())["imports"]) == 2


def test_bench_fio_s_layout_is_read_by_its_pattern_and_repetitions_by_their_run(tmp_path):
    out = tmp_path / "imported"
    naming = Naming(pattern=BENCHFIO_PATTERN, given={"devices": 1})
    summary = importer.run_import([str(BENCHFIO)], out, naming)
    assert summary.line() == "8 files: 8 imported (8 rows)"
    table = results.load(out)
    assert sorted(table["layout"].unique()) == ["jbod", "single"] and set(table["bs"]) == {2**20}
    assert sorted(table["numjobs"].unique()) == [1, 2] and set(table["rw"]) == {"read"}
    for row in table.itertuples():  # rep 0 is run-1, rep 1 is run-2
        assert f"/run-{row.rep + 1}/" in row.source_file
        data = fio_output.load_output(Path(row.source_file).read_text())
        assert row.bw_bytes == sum(j["read"]["bw_bytes"] for j in data["jobs"]) or row.numjobs == 2
        assert row.numjobs == len(data["jobs"])  # bench-fio: no group_reporting, one entry per job
    assert (table["read_from"].str.contains("numjobs: job entries counted")).all()


def test_where_the_name_and_the_file_disagree_the_file_wins_and_it_is_said(tmp_path, capsys):
    tree = tmp_path / "bench" / "md0" / "4k"
    tree.mkdir(parents=True)
    shutil.copy(GOLDEN / "write_1target.json", tree / "randread-8-2.json")  # in fact: write, 128 KiB, qd 1, 1 job
    out = tmp_path / "imported"
    assert cli.main(["import", str(tmp_path / "bench"), "--to", str(out), "--pattern",
                     "{layout}/{bs}/{rw}-{iodepth}-{numjobs}.json", "--devices", "4"]) == 0
    err = capsys.readouterr().err
    for field, name, file in [("rw", "randread", "write"), ("bs", 4096, 131072), ("iodepth", 8, 1), ("numjobs", 2, 1)]:
        assert f"the name says {field}={name}, the file {field}={file}: the file's is kept" in err
    row = results.load(out).iloc[0]
    assert (row["layout"], row["devices"], row["rw"], row["bs"], row["iodepth"], row["numjobs"]) == \
        ("md0", 4, "write", 131072, 1, 1)
    assert "the name says rw=randread" in importer.sources(out)["said"].iloc[0]


def test_an_old_fio_that_echoes_no_options_takes_them_from_the_name(tmp_path):
    named = tmp_path / "old" / "raid5" / "randread-4k-qd1-nj1.json"
    named.parent.mkdir(parents=True)
    shutil.copy(IMPORTED / "fio-2.0.10.json", named)
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(IMPORTED / "fio-2.0.10.json", plain / "run.json")
    out = tmp_path / "imported"
    refused = importer.run_import([str(plain)], out, Naming(given={"layout": "raid5", "devices": 4}))
    # fio 2.0.10 echoes no options: bs is derived from its numbers (bytes over I/Os), and its direction (it moved
    # reads), but not whether at random or in sequence, nor its depth (this sample has no iodepth_level) and jobs
    assert "rw, iodepth, numjobs neither in the file nor given" in refused.refused[0].reason
    assert "which way it moved data (read), not whether at random or in sequence" in refused.refused[0].reason
    naming = Naming(pattern="{layout}/{rw}-{bs}-qd{iodepth}-nj{numjobs}.json", given={"devices": 4})
    assert importer.run_import([str(named)], out, naming).line() == "1 files: 1 imported (1 rows)"
    row = results.load(out).iloc[0]
    assert (row["rw"], row["bs"], row["iodepth"], row["numjobs"], row["fio_version"]) == \
        ("randread", 4096, 1, 1, "fio-2.0.10")
    assert row["read_from"].startswith("io_bytes (KiB) x 1024 x 1000 / runtime (ms); clat, lat (usec x 1000)")


def test_a_map_names_layouts_and_devices_by_glob(tmp_path, capsys):
    mapping = tmp_path / "map.yaml"
    mapping.write_text("- match: '*/single/*'\n  layout: one-ssd\n  devices: 1\n"
                       "- match: '*/jbod/*'\n  layout: two-ssd\n  devices: 2\n")
    out = tmp_path / "imported"
    assert cli.main(["import", str(BENCHFIO), "--to", str(out), "--map", str(mapping)]) == 0
    table = results.load(out)
    assert dict(table.groupby("layout")["devices"].first()) == {"one-ssd": 1, "two-ssd": 2}
    assert table.groupby(["layout", "numjobs"])["rep"].apply(sorted).tolist() == [[0, 1]] * 4
    mapping.write_text("- match: '*'\n  layuot: x\n")
    assert cli.main(["import", str(BENCHFIO), "--to", str(tmp_path / "x"), "--map", str(mapping)]) == 1
    assert "entry 1: 'layuot' not known" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_a_second_import_adds_another_layout_and_mixed_versions_are_flagged(tmp_path):
    out = tmp_path / "imported"
    importer.run_import([str(IMPORTED / "fio-2.21_jsonplus.json")], out,
                             Naming(given={"layout": "old-array", "devices": 2}))
    assert not results.load(out)["fio_versions_mixed"].any()
    importer.run_import([str(IMPORTED / "fio333_groups.json")], out, Naming(given={"layout": "new-array",
                                                                                       "devices": 2}))
    table = results.load(out)
    assert sorted(table["layout"]) == ["new-array", "new-array", "old-array"] and table["fio_versions_mixed"].all()
    notes = json.loads((out / "notes.json").read_text())
    assert any("2 fio versions: fio-2.21 (old-array); fio-3.33 (new-array)" in n and "does not compare" in n
               for n in notes)


def test_client_server_output_gives_a_row_per_host_and_the_cluster(tmp_path):
    out = tmp_path / "imported"
    importer.run_import([str(GOLDEN / "cluster_client_2hosts.json")], out,
                             Naming(given={"layout": "jbod", "devices": 2}))
    table = results.load(out).set_index("host")
    assert sorted(table.index) == ["10.213.1.2", "10.213.2.2", "all"] and (table["hosts"] == 2).all()
    assert table.loc["all", "devices"] == 4 and table.loc["all", "numjobs"] == 4
    hosts = table.drop(index="all")
    assert table.loc["all", "io_bytes"] == hosts["io_bytes"].sum()
    # what a cluster campaign keeps of the same fio.json: each host by measure.fio_client.by_host, then parse
    data = fio_output.load_output((GOLDEN / "cluster_client_2hosts.json").read_text())
    found = fio_client.by_host(data, [fio_client.Endpoint(h, h) for h in hosts.index])
    for host, result in found.items():
        recorded = fio_output.parse(result)
        assert all(table.loc[host, c] == recorded[c] for c in ("bw_bytes", "iops", "clat_p99_ns", "io_bytes")), host
    aggregate = fio_client.aggregate([{**fio_output.parse(r), "devices": 2} for r in found.values()])
    assert table.loc["all", "bw_bytes"] == pytest.approx(aggregate["bw_bytes"], rel=1e-12)


def test_a_folder_that_is_not_an_import_is_refused_and_left_alone(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    before = hashes(mine)
    assert cli.main(["import", str(BENCHFIO), "--to", str(mine), "--layout", "x", "--devices", "1"]) == 1
    assert "is not an earlier import's folder" in capsys.readouterr().err
    assert hashes(mine) == before
    with pytest.raises(RefusedError):
        importer.check_folder(mine)


def test_the_import_folder_inside_a_source_folder_is_not_read_again(tmp_path):
    bag = tmp_path / "bag"
    shutil.copytree(BENCHFIO / "single", bag)
    naming = Naming(given={"layout": "single", "devices": 1})
    assert importer.run_import([str(bag)], bag / "imported", naming).line() == "4 files: 4 imported (4 rows)"
    again = importer.run_import([str(bag)], bag / "imported", naming)
    assert again.line() == f"4 files: 0 imported (0 rows), 4 already in {bag / 'imported'} (the same SHA-256), " \
                           "left as they were"


def test_a_bad_pattern_is_named_before_anything_is_read():
    with pytest.raises(ConfigError, match=r"\{layuot\} is not a field"):
        compile_pattern("{layuot}/{rw}.json")
    assert compile_pattern("{layout}/{*}/{bs}/{rw}-{iodepth}-{numjobs}.json").search(
        "out/md0/randrw75/4k/randrw-16-8.json").groupdict() == {"layout": "md0", "bs": "4k", "rw": "randrw",
                                                                  "iodepth": "16", "numjobs": "8"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.sampled_from(sorted(p.name for p in IMPORTED.glob("*.json"))).map(
    lambda n: (IMPORTED / n).read_bytes()[: len((IMPORTED / n).read_bytes()) * 3 // 4]))
def test_any_bytes_are_imported_refused_by_name_or_left_aside_saying_so(tmp_path, content):
    """A file named alone: imported, refused with a reason, or (not fio's output) left aside, which leaves no fio
    output, an error saying what it was."""
    folder = tmp_path / f"in{os.getpid()}"
    folder.mkdir(exist_ok=True)
    (folder / "x.json").write_bytes(content)
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    try:
        summary = importer.run_import([str(folder / "x.json")], out, Naming(given={"layout": "l", "devices": 1}))
    except ConfigError as exc:
        assert re.search(r"no fio output in .*x\.json: nothing imported, nothing written \(left aside: 1 .+ \(by "
                         r"their content\)\)$", str(exc)), exc
        assert not out.exists()
        return
    assert len(summary.outcomes) == 1 and (summary.refused[0].reason if summary.refused else summary.added)


def test_an_old_fio_s_latency_is_read_back_from_the_folder_in_ns(tmp_path):
    """A report's latency section reads each row's fio.json (raw.fio_outputs): an import keeps it in fio 3.33's
    shape, so fio 2.21's usec come back in ns as the row has them."""
    out = tmp_path / "imported"
    importer.run_import([str(IMPORTED / "fio-2.21_jsonplus.json")], out, Naming(given={"layout": "a",
                                                                                          "devices": 1}))
    table = baseline_and_tax.measured(results.load(out))
    details = latency.details(raw.fio_outputs(out, table))
    assert details["clat_p99_ns"].tolist() == table["clat_p99_ns"].tolist() == pytest.approx([169000.0])
    assert details["slat_mean_ns"].tolist() == pytest.approx([0.0])
    assert details["clat_mean_ns"].tolist() == table["clat_mean_ns"].tolist()


def test_fio_2_1_s_client_server_output_gives_each_host_and_the_cluster(tmp_path):
    """fio 2.1.10 echoed no options: the run comes from the names given; each host from client_stats, fio's own
    "All clients" sum not read as a host."""
    out = tmp_path / "imported"
    naming = Naming(given={"layout": "jbod", "devices": 4, "rw": "randread", "bs": "4k", "iodepth": 1, "numjobs": 1})
    importer.run_import([str(IMPORTED / "fio-2.1.10_client.json")], out, naming)
    table = results.load(out).set_index("host")
    assert sorted(table.index) == ["all", "node1", "node2"] and table.loc["all", "devices"] == 8
    assert table.loc["all", "io_bytes"] == 50_000 * 4096 == table.drop(index="all")["io_bytes"].sum()
    assert (table["read_from"].str.startswith("the hosts' rows summed") == (table.index == "all")).all()


def test_options_fio_did_not_echo_are_fio_s_defaults_from_fio_2_3_on(tmp_path):
    data = json.loads((GOLDEN / "write_1target.json").read_text())
    del data["global options"], data["jobs"][0]["job options"]  # a job given no option at all
    (tmp_path / "bare.json").write_text(json.dumps(data))
    data["fio version"] = "fio-2.2.10"  # before fio 2.3 echoed options: unknown, not defaults
    (tmp_path / "old.json").write_text(json.dumps(data))
    summary = importer.run_import([str(tmp_path / "bare.json"), str(tmp_path / "old.json")], tmp_path / "out",
                                       Naming(given={"layout": "a", "devices": 1}))
    assert [Path(o.path).name for o in summary.refused] == ["old.json"]
    row = results.load(tmp_path / "out").iloc[0]
    assert (row["rw"], row["bs"], row["iodepth"], row["ioengine"], row["direct"]) == ("read", 4096, 1, "psync", 0)


def test_the_report_says_an_import_was_measured_by_fio_alone_not_by_flashscale(tmp_path):
    from flashscale.publish import report

    out = tmp_path / "imported"
    assert cli.main(["import", str(BENCHFIO), "--to", str(out), "--pattern", BENCHFIO_PATTERN, "--devices", "1"]) == 0
    facts = campaign_folder.campaign_facts(out / "campaign.json")
    said = " ".join(report.provenance([facts]))
    made = report.how_made(out, now={"flashscale": "0.1.0", "python": "3.11"})
    for text in (said, made):
        assert "fio alone" in text and "imported" in text, text
        assert "emulated device" not in text and "not recorded (a campaign from before" not in text, text
    assert "Linux (unknown)" not in made and "flashscale import (1 import(s))" in made


def _kept_as_people_keep_them(folder: Path) -> dict[str, str]:
    """fio 3.33's real output (a run of two groups), kept the ways people keep it; each file and what the import must
    say of it."""
    plain = (IMPORTED / "fio333_groups.json").read_bytes()
    text = plain.decode()
    made = {
        "before.json": (b"fio: io_u error on file /dev/sdb: Input/output error: read offset=0, buflen=4096\n"
                        b"fio: pid=5509, err=5/file:io_u.c:1896, func=io_u error, error=Input/output error\n" + plain,
                        "2 lines of text before fio's JSON, kept in the copy and not read (the first: 'fio: io_u error"),
        "after.out": (plain + b"fio: file hash not empty on exit\n",
                      "1 line of text after fio's JSON, kept in the copy and not read (the first: 'fio: file hash"),
        "inside.json": (text.replace('\n  "jobs" : [', '\nfio: pid=7, err=5/file:io_u.c:1896\n  "jobs" : [', 1).encode(),
                        "fio's messages inside the JSON taken out (1 line, the first 'fio: pid=7, err=5/"),
        "nan.json": (re.sub(r'("usr_cpu" : )[0-9.]+', r"\1-nan", text).encode(), "nan and inf read as numbers"),
        "utf16.json": (text.encode("utf-16"), "read as UTF-16 with a byte-order mark"),
        "bom.json": (b"\xef\xbb\xbf" + plain, "read as UTF-8 with a byte-order mark"),
        "crlf.json": (text.replace("\n", "\r\n").encode(), None),
        "run.json.gz": (gzip.compress(plain), "read as gzip-compressed"),
        "run.json.xz": (lzma.compress(plain), "read as xz-compressed"),
        "run.log.bz2": (bz2.compress(plain), "read as bzip2-compressed"),
    }
    for name, (content, _) in made.items():
        (folder / name).write_bytes(content)
    return {name: said for name, (_, said) in made.items()}


def test_fio_output_as_people_keep_it_is_read_and_what_was_around_the_json_is_said(tmp_path, capsys):
    """Messages before, after and inside the JSON, nan, a byte-order mark, CRLF, compression: each file gives the same
    rows as the clean one, and the import says, by file, what it read past."""
    bag = tmp_path / "kept"
    bag.mkdir()
    expected = _kept_as_people_keep_them(bag)
    clean = tmp_path / "clean"
    assert cli.main(["import", str(IMPORTED / "fio333_groups.json"), "--to", str(clean), "--layout", "single",
                     "--devices", "1"]) == 0
    out = tmp_path / "imported"
    capsys.readouterr()
    assert cli.main(["import", str(bag), "--to", str(out), "--layout", "single", "--devices", "1"]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"{len(expected)} files: {len(expected)} imported ({2 * len(expected)} rows)")
    for name, words in expected.items():
        if words:
            assert f"{bag / name}: {words}" in said.err, name
    reference = results.load(clean).set_index("source_group")["bw_bytes"]
    table = results.load(out)
    assert len(table) == 2 * len(expected) and (table["status"] == "ok").all()
    for name, rows in table.groupby("source_file"):
        assert rows.set_index("source_group")["bw_bytes"].to_dict() == reference.to_dict(), name


def test_runs_appended_to_one_file_are_each_read(tmp_path, capsys):
    """``fio ... >> all.json`` three times, with fio's messages between them: three outputs, each its rows, each its
    raw copy; the repetitions of a point are numbered in fio's order."""
    one = (IMPORTED / "fio333_groups.json").read_text()
    other = (GOLDEN / "write_1target.json").read_text()
    appended = tmp_path / "all.json"
    appended.write_text(one + "fio: note: a message between runs\n" + other + one)
    out = tmp_path / "imported"
    assert cli.main(["import", str(appended), "--to", str(out), "--layout", "single", "--devices", "1"]) == 0
    said = capsys.readouterr()
    assert said.out.startswith("1 files: 1 imported (5 rows)")
    assert "3 fio outputs in one file: 3 runs" in said.err
    assert "output 1: 1 line of text before fio's JSON" in said.err
    table = results.load(out)
    assert sorted(table["source_output"]) == [0, 0, 1, 2, 2]
    twice = table[table["source_output"] != 1]
    assert sorted(twice["rep"]) == [0, 0, 1, 1] and twice.groupby("point")["rep"].nunique().eq(2).all()
    for row in table.itertuples():
        assert (out / row.raw_dir / "fio.json").is_file() and f"/output{row.source_output}/" in row.raw_dir


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                                           max_size=40).filter(lambda t: not t.startswith("{")), max_size=3),
                          st.sampled_from(["fio333_groups.json", "fio-3.1.json", "fio-2.0.10.json"])),
                min_size=1, max_size=4),
       st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40)
                .filter(lambda t: not t.startswith("{")), max_size=2))
def test_outputs_with_any_lines_around_them_are_each_read_whole(outputs, tail):
    """Real outputs, each after any lines that do not begin with ``{``, then any lines after the last: as many
    documents as outputs, each equal to its file read alone, the lines before each its preamble."""
    from flashscale.measure.fio_import import documents
    text, expected = "", []
    for lines, name in outputs:
        before = "".join(line + "\n" for line in lines)
        own = (IMPORTED / name).read_text()
        text += before + own + ("" if own.endswith("\n") else "\n")
        expected.append((before, json.loads(own)))
    text += "".join(line + "\n" for line in tail)
    found = documents.documents(text, "t")
    assert [d.data for d in found] == [data for _, data in expected]
    assert [d.preamble for d in found] == [("\n" if i else "") + before for i, (before, _) in enumerate(expected)]


def test_fio_s_reports_of_one_run_as_it_ran_are_one_run_the_last(tmp_path, capsys):
    """fio 3.33 with --status-interval=1 wrote four whole outputs of a 3 s run, each counted from its start: one row,
    the last report's, and it is said. The same file twice over (two runs appended) is two runs of one row each."""
    from flashscale.measure.fio_import import documents
    name = IMPORTED / "fio333_status_interval.json"
    reports = reader.read_outputs(name.read_text(), "s")
    assert len(reports) == 4 and [n for _, n in documents.runs(reports)] == [4]
    last = reports[-1]["jobs"][0]["read"]
    out = tmp_path / "imported"
    assert cli.main(["import", str(name), "--to", str(out), "--layout", "single", "--devices", "1"]) == 0
    assert "the last of 4 reports fio wrote of one run as it ran (--status-interval)" in capsys.readouterr().err
    table = results.load(out)
    assert len(table) == 1 and table["bw_bytes"].iloc[0] == pytest.approx(last["bw_bytes"])
    twice = tmp_path / "twice.json"
    twice.write_text(name.read_text() * 2)
    assert cli.main(["import", str(twice), "--to", str(tmp_path / "twice"), "--layout", "single",
                     "--devices", "1"]) == 0
    assert "8 fio outputs in one file: 2 runs" in capsys.readouterr().err
    assert sorted(results.load(tmp_path / "twice")["rep"]) == [0, 1]
