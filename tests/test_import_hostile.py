"""``flashscale import`` against files made to hurt it: each refused by name (or its row failed, saying why), never a
traceback, never a path of its choosing, never memory or time beyond a bound; the good files beside it imported, the
folder written whole or not at all, and a later import into it working."""
from __future__ import annotations

import gzip
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale import cli
from flashscale.measure.fio_import import bounds, importer, reader
from flashscale.measure import campaign_folder, raw, results
from flashscale.measure.fio_import.file_names import Naming

from conftest import sha256

GOLDEN = Path(__file__).parent / "golden"
IMPORTED = GOLDEN / "imported"
GOOD = (GOLDEN / "write_1target.json", IMPORTED / "fio333_groups.json")
CLIENT = IMPORTED / "fio333_client_2servers.json"
NAMES = Naming(given={"layout": "single", "devices": 1})


def tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (links too, not followed) and its SHA-256."""
    return {str(p.relative_to(folder)): ("link" if p.is_symlink() else sha256(p)) for p in sorted(folder.rglob("*"))
            if p.is_symlink() or p.is_file()}


def crafted() -> dict[str, tuple[bytes, str]]:
    """Files crafted against the reader, each with what its refusal (or failed row) must say."""
    text = (GOLDEN / "write_1target.json").read_text()
    data = json.loads(text)

    def changed(**top) -> bytes:
        return json.dumps({**data, **top}).encode()

    job = data["jobs"][0]
    return {
        "digits.json": (text.replace('"io_bytes" : ', '"io_bytes" : ' + "9" * 5000, 1).encode(),
                        "a number fio never writes"),
        "nan_time.json": (changed(timestamp=float("nan")), "is not a time fio writes"),
        "far_time.json": (changed(timestamp=1e300), "is not a time fio writes"),
        "nan_runtime.json": (changed(jobs=[{**job, "job_runtime": float("nan"),
                                            "job options": {**job.get("job options", {}), "group_reporting": "1",
                                                            "time_based": "1"}}]), ""),
        "object_name.json": (changed(jobs=[{**job, "error": 5, "jobname": {"a": [1, 2]}}]), "jobname: expected text"),
        "escape_group.json": (changed(jobs=[{**job, "groupid": "../../../../x"}]), "groupid: expected a whole number"),
        "huge_group.json": (changed(jobs=[{**job, "groupid": 2**40}]), "groupid: expected a whole number"),
        "negative.json": (changed(jobs=[{**job, "write": {**job["write"], "bw_bytes": -5}}]), ""),
        "control.txt": (("x: (groupid=0, jobs=1): err= 0: pid=1: \x1b[2J\x07" + "A" * 5000 + "\n").encode(), ""),
    }


def test_a_crafted_file_beside_good_ones_is_refused_by_name_and_a_later_import_into_the_folder_works(tmp_path, capsys):
    bag = tmp_path / "bag"
    bag.mkdir()
    for path in GOOD:
        shutil.copy(path, bag / path.name)
    made = crafted()
    for name, (content, _) in made.items():
        (bag / name).write_bytes(content)
    outside = tree(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["import", str(bag), "--to", str(out), "--layout", "single", "--devices", "1"]) == 3
    said = capsys.readouterr()
    assert "Traceback" not in said.err and reader.UNEXPECTED not in said.out + said.err
    for name, (_, words) in made.items():
        line = next((l for l in said.err.splitlines() if l.startswith(f"refused {bag / name}: ")), None)
        if line is not None:
            assert words in line, (name, line)
    table = results.load(out)
    sources = importer.sources(out).set_index("path")
    for name in ("digits.json", "nan_time.json", "far_time.json", "object_name.json", "escape_group.json",
                 "huge_group.json"):
        assert sources.loc[str((bag / name).resolve()), "outcome"] == "refused", name
    kept = {Path(p).name for p in table["source_file"]}
    assert {p.name for p in GOOD} <= kept
    negative = table[table["source_file"].str.endswith("negative.json")]
    assert (negative["status"] == "failed").all() and negative["error"].str.contains("cannot be a rate").all()
    assert table[table["source_file"].str.endswith("nan_runtime.json")]["numjobs"].tolist() == [1]  # option kept
    assert {k: v for k, v in tree(tmp_path).items() if not k.startswith("out/")} == outside  # nothing else written
    for value in (*sources["reason"].dropna(), *sources["said"].dropna()):
        assert value.isprintable() and "\x1b" not in value and len(value) <= 2 * bounds.MESSAGE + 400
    assert cli.main(["import", str(IMPORTED / "fio333_grouped_jsonplus.json"), "--to", str(out), "--layout", "md0",
                     "--devices", "2"]) == 0
    assert "md0" in set(results.load(out)["layout"]) and len(importer.stored(out).table) == len(results.load(out))


def test_nothing_read_from_a_file_names_a_path_of_the_folder(tmp_path):
    """A client's hostname of 'h/../../x' (and the sockets' own paths real fio wrote) name hosts, not folders: the
    raw copies go under names the import makes, and every one lies under --to."""
    text = CLIENT.read_text()
    data = json.loads(text[text.index("{\n"):])
    for entry in data["client_stats"]:
        entry["hostname"] = "h/../../x" if entry["hostname"] == data["client_stats"][0]["hostname"] else "../y"
    source = tmp_path / "in" / "client.json"
    source.parent.mkdir()
    source.write_text(json.dumps(data))
    out = tmp_path / "deep" / "out"
    summary = importer.run_import([str(source)], out, NAMES)
    assert not summary.refused
    table = results.load(out)
    assert {"h/../../x", "../y"} <= {host.rsplit(":", 1)[0] for host in table["host"]}
    for folder in table["raw_dir"]:
        assert re.fullmatch(r"raw/[0-9a-f]{16}/group\d+-(host\d+|all)", folder), folder
        assert (out / folder).resolve().is_relative_to(out.resolve()) and (out / folder / "fio.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "in"]
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["out"]


def test_analyze_reads_no_raw_folder_outside_the_campaign(tmp_path):
    """A rows.jsonl whose raw_dir climbs out of its folder (written by hand, or by an older import) is refused."""
    out = tmp_path / "out"
    importer.run_import([str(GOOD[0])], out, NAMES)
    secret = tmp_path / "secret" / "fio.json"
    secret.parent.mkdir()
    shutil.copy(GOOD[0], secret)
    rows, _ = campaign_folder.read_rows(out)
    campaign_folder.rewrite_rows(out, [{**row, "raw_dir": "../secret"} for row in rows])
    with pytest.raises(Exception, match="outside"):
        list(raw.fio_outputs(out, results.to_frame(campaign_folder.read_rows(out)[0])))


def test_symbolic_links_in_a_folder_are_not_followed_unless_named(tmp_path, capsys):
    secret = tmp_path / "secret.json"
    shutil.copy(GOOD[0], secret)
    (tmp_path / "private").mkdir()
    shutil.copy(GOOD[1], tmp_path / "private" / "run.json")
    bag = tmp_path / "bag"
    bag.mkdir()
    shutil.copy(IMPORTED / "fio333_grouped_jsonplus.json", bag / "own.json")
    (bag / "link.json").symlink_to(secret)
    (bag / "folder").symlink_to(tmp_path / "private")
    out = tmp_path / "out"
    assert cli.main(["import", str(bag), "--to", str(out), "--layout", "a", "--devices", "1"]) == 0
    said = capsys.readouterr().out
    assert "1 files: 1 imported" in said and "2 symbolic links (not followed" in said
    assert set(results.load(out)["source_file"]) == {str((bag / "own.json").resolve())}
    assert "secret" not in (out / "sources.csv").read_text()
    assert cli.main(["import", str(bag / "link.json"), "--to", str(out), "--layout", "a", "--devices", "1"]) == 0
    assert str(secret.resolve()) in set(results.load(out)["source_file"])  # named on the command line: read


def test_a_gzip_expanding_past_the_limit_is_refused_by_name_and_expanding_stops_there(tmp_path, monkeypatch):
    """The limit (256 MiB; 1 MiB here) is said in the refusal, and no more than the limit and one piece is ever
    expanded: a bomb costs the limit, not what it expands to (make bench measures the 1 GiB one)."""
    monkeypatch.setattr(bounds, "MAX_BYTES", 2**20)
    monkeypatch.setattr(bounds, "LIMIT_WORDS", "1 MiB, the most flashscale import reads of one file")
    expanded = []
    real = bounds.pieces

    def counted(name, view):
        for piece in real(name, view):
            expanded.append(len(piece))
            yield piece
    monkeypatch.setattr(bounds, "pieces", counted)
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "bomb.json.gz").write_bytes(gzip.compress(b" " * (64 * 2**20)))
    shutil.copy(GOOD[0], bag / "good.json")
    summary = importer.run_import([str(bag)], tmp_path / "out", NAMES)
    (bomb,) = summary.refused
    assert bomb.reason.endswith("a gzip file that expands to more than 1 MiB, the most flashscale import reads of "
                                "one file: refused, not expanded further")
    assert sum(expanded) <= 2**20 + bounds.CHUNK and len(summary.added) == 1
    (bag / "big.log").write_bytes(b"x" * (2**20 + 1))
    again = importer.run_import([str(bag / "big.log")], tmp_path / "out", NAMES)
    assert again.refused[0].reason == "it holds more than 1 MiB, the most flashscale import reads of one file: " \
                                      "not read"


@pytest.mark.parametrize("make", [
    lambda n: "x: (groupid=0, jobs=1): err= 0: pid=1: " + " " * n + "x\n",
    lambda n: "x: (groupid=0, jobs=1): err= 0: pid=1: Thu Dec  6 09:18:04 2012\n  read : io=4KB, bw=4KB/s, iops=1 , "
              "runt= 1000msec\n    clat percentiles (usec):\n     |" + "1" * n + "\n",
    lambda n: "a: (g=0): rw=read, bs=" + ", bs=" * (n // 5) + "\n" + "x: (groupid=0, jobs=1): err= 0: pid=1: now\n",
    lambda n: "x: (groupid=0, jobs=1): err= 0 (" + ": (groupid=0, jobs=1): err= 0 (" * (n // 30) + "\n",
])
def test_text_crafted_against_the_normal_patterns_is_read_or_refused_by_name(tmp_path, make):
    """Each line crafted where a backtracking pattern would take time quadratic in its length (144 KB here; the old
    patterns took 131 s on the second): read or refused, never an error of Python's. make bench times them."""
    source = tmp_path / "crafted.txt"
    source.write_text(make(144 * 1024))
    outcome = reader.read_file(source, NAMES, "c")
    assert outcome.reason is None or reader.UNEXPECTED not in outcome.reason


def test_an_import_that_fails_or_is_killed_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    importer.run_import([str(GOOD[0])], out, NAMES)
    before = tree(out)

    def broken(folder):
        raise OSError("disk full")
    monkeypatch.setattr(results, "rebuild_table", broken)
    with pytest.raises(OSError, match="disk full"):
        importer.run_import([str(GOOD[1])], out, NAMES)
    assert tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    monkeypatch.undo()
    killer = ("import sys, os, signal\nfrom flashscale.measure.fio_import import importer, swap\n"
              "from flashscale.measure.fio_import.file_names import Naming\n"
              "swap.exchange = lambda new, to: os.kill(os.getpid(), signal.SIGKILL)\n"
              f"importer.run_import([{str(GOOD[1])!r}], __import__('pathlib').Path({str(out)!r}), "
              "Naming(given={'layout': 'single', 'devices': 1}))\n")
    done = subprocess.run([sys.executable, "-c", killer], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert tree(out) == before  # killed before the exchange: the folder as it was
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".out.import-")]
    assert len(left) == 1  # the killed import's staging folder, marked with its (dead) pid
    assert importer.run_import([str(GOOD[1])], out, NAMES).added  # the next import works, and clears it
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.import-")]
    assert len(results.load(out)) == 3


def _text(path: Path) -> str:
    return path.read_text()


def _built(version: str, name: str) -> str:
    return lzma.decompress((IMPORTED / "built" / version / f"{name}.out.xz").read_bytes()).decode()


SEEDS = {  # real fio output of each format, as the mutations start from
    "json": _text(IMPORTED / "fio333_groups.json"), "json+": _text(IMPORTED / "fio-2.21_jsonplus.json"),
    "terse": _text(IMPORTED / "fio333_groups_terse3.txt"), "client": _text(CLIENT),
    "normal": re.sub(r"(?ms)^\{\n.*?^\}\n", "", _text(IMPORTED / "fio333_groups_normal_json.txt"), count=1),
    "json+ by index (fio 2.2.12)": _built("fio-2.2.12", "groups_json+"),
    "client of two, options a list (fio 3.42)": _built("fio-3.42", "client2_json"),
    "normal, terse v2 and JSON of one run (fio 3.0)": _built("fio-3.0", "groups_terse+json+v2"),
    "normal, old layout (fio 2.0.10)": _built("fio-2.0.10", "groups_normal"),
    "status reports, normal (fio 3.42)": _built("fio-3.42", "status_normal"),
}
HOSTILE = ["NaN", "-1", "1e300", "9" * 5000, '"x"', "{}", "[]", "null", "true", '"../../x"', '"h/../../x"',
           '{"a": [1]}', "\x1b[2J", "(", ";", "\n{", "-nan", "18446744073709551617"]
mutation = st.tuples(st.sampled_from(["replace", "delete", "insert", "duplicate"]), st.integers(0, 10**6),
                     st.integers(1, 64), st.sampled_from(HOSTILE))


def mutated(text: str, mutations) -> str:
    for kind, at, length, value in mutations:
        at %= len(text) + 1
        if kind == "replace":
            number = re.compile(r"-?\d+(?:\.\d+)?").search(text, at)
            text = text[:number.start()] + value + text[number.end():] if number else text + value
        elif kind == "delete":
            text = text[:at] + text[at + length:]
        elif kind == "insert":
            text = text[:at] + value + text[at:]
        else:
            text = text[:at] + text[at:at + length] * 2 + text[at + length:]
    return text


@settings(max_examples=int(os.environ.get("FLASHSCALE_FUZZ_EXAMPLES", 30)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(SEEDS)), st.lists(mutation, min_size=1, max_size=4), st.booleans())
def test_mutated_fio_output_of_each_format_cannot_hurt_the_import(tmp_path, form, mutations, compressed):
    """Whatever a mutation makes of real output: no error escapes, nothing is written outside --to, the good file
    beside it is imported and the folder reads back. 30 examples here (about 3 s); FLASHSCALE_FUZZ_EXAMPLES=2000
    for a long search (333 s, clean at this commit)."""
    work = tmp_path / f"w{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "in").mkdir(parents=True)
    content = mutated(SEEDS[form], mutations).encode("utf-8", "surrogatepass")
    (work / "in" / ("mutated.txt.gz" if compressed else "mutated.txt")).write_bytes(
        gzip.compress(content) if compressed else content)
    shutil.copy(GOOD[0], work / "in" / "good.json")
    before = tree(work)
    naming = Naming(given={"layout": "l", "devices": 1, "rw": "random", "numjobs": 1, "iodepth": 1, "bs": "4k"})
    summary = importer.run_import([str(work / "in")], work / "out", naming)
    assert all(o.reason is None or reader.UNEXPECTED not in o.reason for o in summary.outcomes), \
        [o.reason for o in summary.outcomes]
    assert any(Path(o.path).name == "good.json" for o in summary.added)
    assert {k: v for k, v in tree(work).items() if not k.startswith("out/")} == before
    table = results.load(work / "out")
    assert isinstance(table, pd.DataFrame) and len(importer.stored(work / "out").table) == len(table)


def test_an_import_into_a_folder_named_by_a_link_writes_the_folder_it_names(tmp_path):
    real = tmp_path / "real[1]"
    importer.run_import([str(GOOD[0])], real, NAMES)
    (tmp_path / "link").symlink_to(real)
    assert importer.run_import([str(GOOD[1])], tmp_path / "link", NAMES).added
    assert (tmp_path / "link").is_symlink() and len(results.load(real)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real[1]"]


def test_a_second_import_into_a_folder_being_written_is_refused(tmp_path, monkeypatch):
    from flashscale.errors import RefusedError
    from flashscale.measure.fio_import import swap
    out = tmp_path / "out"
    importer.run_import([str(GOOD[0])], out, NAMES)
    before = tree(out)
    with swap.locked(out):  # as a first import holds it while it writes
        with pytest.raises(RefusedError, match="another flashscale import into .* is running"):
            importer.run_import([str(GOOD[1])], out, NAMES)
    assert tree(out) == before
    assert importer.run_import([str(GOOD[1])], out, NAMES).added


FIO_JSON = (GOLDEN / "write_1target.json").read_text()
CRAFTED = [  # what a folder may hold, each with fio's own words or none
    b"", b"\x00" * 10, os.urandom(2048), b"\xff\xfe" + "{}".encode("utf-16-le"),
    ('{"fio version": "fio-3.33", "jobs": ' + "[" * 200_000 + "]" * 200_000 + "}").encode(),
    ("{\n" + '"a": {' * 50_000 + "}" * 50_000 + "}").encode(),
    FIO_JSON.replace('"io_bytes" : ', '"io_bytes" : 1' + "0" * 400, 1).encode(),
    FIO_JSON.replace('"bw_bytes" : ', '"bw_bytes" : NaN, "x" : ', 1).encode(),
    FIO_JSON.replace('"runtime" : ', '"runtime" : 1e308, "y" : ', 1).encode(),
    ("3;fio-3.33;" + ";" * 10_000 + "\n").encode(), ("[global]\nrw=read\n" * 1000).encode(),
    ("1000, 2, 0, 4096, 0\n" * 1000).encode(), b"x: (groupid=0, jobs=1): err= 0: pid=1: now\n",
]
SUFFIXES = ["", ".json", ".output", ".log", ".txt", ".out", ".fio", ".bin", ".json.gz"]


@settings(max_examples=int(os.environ.get("FLASHSCALE_FUZZ_EXAMPLES", 30)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(SUFFIXES), st.one_of(st.sampled_from(CRAFTED), st.binary(max_size=4096),
                                                              st.text(max_size=2000).map(str.encode))),
                min_size=1, max_size=6))
def test_any_files_in_a_folder_are_read_left_aside_or_refused_by_name(tmp_path, monkeypatch, files):
    """Whatever a folder holds under whatever names: every file imported, left aside by its content or refused with
    a reason of flashscale's (never an error it did not expect), each read once at most, the good file beside them
    imported. The deepest nesting (200,000 brackets) is refused in 0.08 s; 30 examples here take about 3.5 s,
    FLASHSCALE_FUZZ_EXAMPLES=300 took 105 s, clean at this commit."""
    work = tmp_path / f"w{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "in").mkdir(parents=True)
    for number, (suffix, content) in enumerate(files):
        (work / "in" / f"f{number}{suffix}").write_bytes(gzip.compress(content) if suffix.endswith(".gz")
                                                         else content)
    shutil.copy(GOOD[0], work / "in" / "good.json")
    read, real = [], bounds.read_bounded
    with monkeypatch.context() as patched:  # each example its own, undone after it
        patched.setattr(bounds, "read_bounded", lambda path: read.append(Path(path).name) or real(path))
        summary = importer.run_import([str(work / "in")], work / "out", NAMES)
    assert len(read) == len(set(read)) <= len(files) + 1
    assert len(summary.outcomes) + sum(summary.aside.values()) == len(files) + 1
    assert all(o.reason is None or reader.UNEXPECTED not in o.reason for o in summary.outcomes), \
        [o.reason for o in summary.outcomes]
    assert any(Path(o.path).name == "good.json" for o in summary.added)
    assert len(results.load(work / "out")) == sum(len(o.rows) for o in summary.added)


def test_a_binary_file_in_a_folder_is_left_aside_by_its_first_bytes_alone(tmp_path, monkeypatch):
    """A folder's binary file (a disk image, an archive fio did not write) costs its first 64 KiB, never the whole
    read: it is left aside before ``read_bounded``; a text file past the limit is refused by name, unread."""
    monkeypatch.setattr(bounds, "MAX_BYTES", 2**20)
    monkeypatch.setattr(bounds, "LIMIT_WORDS", "1 MiB, the most flashscale import reads of one file")
    read, real = [], bounds.read_bounded
    monkeypatch.setattr(bounds, "read_bounded", lambda path: read.append(Path(path).name) or real(path))
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "disk.img").write_bytes(b"\x00" * (8 * 2**20))
    (bag / "huge.log").write_bytes(b"y" * (2**20 + 1))
    shutil.copy(GOOD[0], bag / "good.output")
    summary = importer.run_import([str(bag)], tmp_path / "out", NAMES)
    assert summary.aside == {"binary": 1} and "disk.img" not in read
    assert {Path(o.path).name: o.reason for o in summary.refused} == {
        "huge.log": "it holds more than 1 MiB, the most flashscale import reads of one file: not read"}
    assert [Path(o.path).name for o in summary.added] == ["good.output"]
