"""fio's own release history as the oracle: the outputs of 20 fio releases, 2.0.9 to 3.42, built from their tags and
run here on the same jobs (tests/golden/imported/built: README.md, build.py, run.py), every one imported, and every
number held to what fio itself reported of the same run in its JSON.

- A version that writes several formats of one run at once (fio 2.3 on: normal, terse and JSON in one file; fio
  2.1.8 to 2.2.x: JSON or normal with the terse lines of the same run after it) gives the oracle for its other
  formats: the JSON's bytes exactly, its bandwidth within fio's own rounding (KiB/s before fio 3.2), its latency to
  what the format prints.
- Every normal output is held to the aggregate fio printed itself ("Run status group": bytes over the longest
  runtime), within the digits fio printed.
- Before fio 2.1.8 a run writes one format: JSON, normal and terse are separate runs of the same fixed-size jobs,
  so their bytes (which fio counted) agree exactly, and each rate is held to its own output's. fio 2.0.9 writes no
  JSON at all (JSON was born in 2.0.10, cc372b17): its normal and terse outputs only.
- What fio echoes no options for (JSON before 2.3, terse) is derived: the direction, bs from bytes over I/Os,
  iodepth from fio's own iodepth_level; random or sequential comes from the map below, as a user would give it.
"""
from __future__ import annotations

import json
import lzma
import math
import re
from pathlib import Path

import pytest

from flashscale.measure.fio_import import importer, reader
from flashscale.measure import results
from flashscale.measure.fio_import.file_names import Naming, Rule

BUILT = Path(__file__).parent / "golden" / "imported" / "built"


def version_of(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", name))


VERSIONS = sorted((p.name for p in BUILT.glob("fio-*")), key=version_of)
# What each job file ran, by group name (its first job's): rw, bs, numjobs, iodepth as the job file says them
TRUTH = {"randread": ("randread", 4096, 2, 1), "write": ("write", 65536, 1, 4), "randwrite": ("randwrite", 16384, 3, 2),
         "read": ("read", 2**20, 1, 8), "first": ("read", 65536, 3, 1), "randrw": ("randrw", 4096, 1, 1),
         "depth": ("randread", 4096, 1, 8), "gtod": ("randread", 4096, 2, 1), "mixed": ("randrw", 4096, 1, 1),
         "writes": ("write", 4096, 1, 1), "status": ("read", 4096, 1, 1), "client": ("randread", 4096, 2, 1)}
FIXED_SIZE = ("groups", "randrw", "depth", "gtod", "unified", "client1", "client2")  # the bytes of each run alike
# What a user says of files that echo no options: random or sequential (a unified side says no direction: its
# whole rw), and the jobs of a group fio reported in one entry
NAMING = Naming(given={"layout": "null", "devices": 1}, rules=tuple(
    Rule(None, {"rw": rw if name in ("mixed", "writes") else "random" if rw.startswith("rand") else "sequential",
                **({"numjobs": jobs} if name in ("write", "read", "first", "randrw", "depth", "status", "mixed",
                                                  "writes") else {})}, job=name)
    for name, (rw, _, jobs, _) in TRUTH.items()))
JSON_BLOCK = re.compile(r'\{\n  "fio version".*?\n\}\n', re.S)
TERSE = re.compile(r"^[2-5];")


def outputs(version: str) -> dict[str, str]:
    return {p.name.removesuffix(".out.xz"): lzma.decompress(p.read_bytes()).decode("utf-8", "replace")
            for p in sorted((BUILT / version).glob("*.out.xz"))}


def parts(text: str) -> tuple[list[dict], list[str], str]:
    """fio's file cut into what each format wrote: the JSON documents, the terse lines, the normal text."""
    docs = [json.loads(re.sub(r"(?<=: )-?nan\b", "NaN", block)) for block in JSON_BLOCK.findall(text)]
    rest = JSON_BLOCK.sub("", text).splitlines()
    terse = [line for line in rest if TERSE.match(line)]
    normal = "\n".join(line for line in rest if not TERSE.match(line) and line != "Additional Terse Output:")
    return docs, terse, normal + "\n"


def read(tmp_path: Path, name: str, text: str) -> reader.FileOutcome:
    path = tmp_path / f"{name}.out"
    path.write_text(text)
    return reader.read_file(path, NAMING, "history")


def groups_of(doc: dict) -> dict[tuple, list[dict]]:
    """fio's entries by (group, host): ``jobs``, or a client's ``client_stats`` (its "All clients" sum apart)."""
    found: dict[tuple, list[dict]] = {}
    for entry in doc.get("jobs") or [e for e in doc["client_stats"] if e["jobname"] != "All clients"]:
        found.setdefault((entry["groupid"], entry.get("hostname")), []).append(entry)
    return found


def moved(doc: dict, entries: list[dict]) -> dict[str, tuple[int, int]]:
    """Per direction fio wrote (read, write, or one unified mixed side): bytes summed, the longest runtime (ms).
    fio before 2.21 wrote io_bytes in KiB (``io_bytes >> 10``, stat.c)."""
    scale = 1024 if version_of(doc["fio version"]) < (2, 21) else 1
    out = {}
    for side in ("read", "write", "mixed"):
        if side in entries[0]:
            out[side] = (sum(e[side]["io_bytes"] * scale for e in entries), max(e[side]["runtime"] for e in entries))
    return out


def row_of(rows: list[dict], group: int, host: str | None = None) -> dict:
    (row,) = [r for r in rows if r["source_group"] == group and (host is None or r["host"].startswith(host))]
    return row


def check_against_json(doc: dict, rows: list[dict]) -> None:
    """Each group's row against fio's own JSON of the run: bytes exact, bandwidth within fio's rounding, one job's
    IOPS, latency and p99 as fio wrote them; a group fio reported failed, or timed in no millisecond, no rate."""
    for (group, host), entries in groups_of(doc).items():
        row = row_of(rows, group, host)
        sides = moved(doc, entries)
        total = sum(b for b, _ in sides.values())
        if any(e["error"] for e in entries) or any(b > 0 and ms == 0 for b, ms in sides.values()):
            assert row["status"] == "failed", row
            continue
        assert row["status"] == "ok" and row["io_bytes"] == total, (row["io_bytes"], total)
        rw, bs, jobs, _ = TRUTH[entries[0]["jobname"]]
        assert (row["rw"], row["bs"], row["numjobs"]) == (rw, bs, jobs), row  # echoed, counted, derived or given
        rate = sum(1000 * b // ms for b, ms in sides.values() if ms)
        if len(entries) == 1:
            own = [entries[0][s] for s in sides]
            fio_rate = sum(s["bw_bytes"] if "bw_bytes" in s else s["bw"] * 1024 for s in own)
            slack = 0 if all("bw_bytes" in s for s in own) else 1024 * len(own) * (1 + 1000 / max(ms for _, ms in
                                                                                                  sides.values()))
            assert abs(row["bw_bytes"] - fio_rate) <= slack, (row["bw_bytes"], fio_rate)
            assert row["iops"] == pytest.approx(sum(s["iops"] for s in own), rel=1e-9)
            main = max(own, key=lambda s: s["io_bytes"])
            clat, unit = (main["clat_ns"], 1) if "clat_ns" in main else (main["clat"], 1000)
            assert row["clat_mean_ns"] == pytest.approx(clat["mean"] * unit, rel=1e-9, abs=1e-9)
            listed = {float(k): v for k, v in clat.get("percentile", {}).items()}
            if 99.0 in listed:
                assert row["clat_p99_ns"] == pytest.approx(listed[99.0] * unit)
        else:
            assert row["bw_bytes"] == pytest.approx(rate, rel=1e-12, abs=1024 * len(sides)), (row["bw_bytes"], rate)


RUN_STATUS = re.compile(r"^\s+(READ|WRITE|MIXED): (?:io=\S+, aggrb=(?P<old>[\d.]+)(?P<olds>[KMGTP]?)B/s.*maxt="
                        r"(?P<maxt>\d+)msec|bw=\S+ \((?P<new>[\d.]+)(?P<news>[kMGTP]?)B/s\))")


def run_status(normal: str) -> dict[int, list[tuple[float, float]]]:
    """fio's own aggregate of each group (the last report's), from its normal output: per group, each direction's
    (bytes/s, how far fio's printed digits and units let it be off)."""
    found: dict[int, list] = {}
    group = None
    for line in normal.splitlines():
        if line.startswith("Run status group"):
            group = int(line.split()[3])
            found[group] = []
        elif group is not None and (m := RUN_STATUS.match(line)):
            digits, letter = (m["old"], m["olds"]) if m["old"] else (m["new"], m["news"])
            unit = (1024 if m["old"] else 1000) ** " KMGTP".index(letter.upper() or " ")
            # a unit of the last digit printed (fio's num2str rounds up as often as not); of the old layout's integer
            # part (fio 2.x's num2str printed 1030.886 MB/s as 1030.1: its decimals are not its value's), and KiB
            last = 1 if m["old"] else 10 ** -len(digits.partition(".")[2])
            slack = unit * last + (1024 * 1000 / int(m["maxt"]) if m["old"] else 0)
            found[group].append((float(digits) * unit, slack))
    return found


def check_normal(normal: str, rows: list[dict], job: str) -> None:
    """The normal output's rows: what ran as the job file says it (rw, bs, jobs, iodepth from fio's description
    lines), and each group's bandwidth what fio printed in its "Run status group" lines."""
    printed = run_status(normal)
    for row in rows:
        rw, bs, jobs, depth = TRUTH[row["source_job"]]
        hosts = 2 if job == "client2" else 1  # a client's normal output: one row of all its servers' jobs
        assert (row["rw"], row["bs"], row["numjobs"], row["iodepth"]) == (rw, bs, jobs * hosts, depth), row
        if row["status"] != "ok" or not printed.get(row["source_group"]) or job.startswith("client"):
            continue
        value = sum(v for v, _ in printed[row["source_group"]])
        assert abs(row["bw_bytes"] - value) <= sum(s for _, s in printed[row["source_group"]]) + 1, (row, value)


def check_same_run(mine: list[dict], theirs: list[dict], tolerance: dict) -> None:
    """Rows of one run read from two formats: bytes exact, bandwidth within ``tolerance['bw']`` bytes/s per
    1000/runtime, the rest as the format printed them."""
    assert len(mine) == len(theirs)
    for row in mine:
        other = row_of(theirs, row["source_group"], row["host"] or None)
        assert row["status"] == other["status"]
        if row["status"] != "ok":
            continue
        assert row["io_bytes"] == other["io_bytes"]
        slack = tolerance["bw"] * (1 + 1000 / (1000 * row["runtime_s"]))
        assert abs(row["bw_bytes"] - other["bw_bytes"]) <= slack, (row["bw_bytes"], other["bw_bytes"])
        assert row["iops"] == pytest.approx(other["iops"], rel=tolerance["iops"], abs=1)
        assert row["clat_mean_ns"] == pytest.approx(other["clat_mean_ns"], rel=tolerance["lat"], abs=tolerance["ns"]) \
            or math.isnan(row["clat_mean_ns"])
        assert (row["rw"], row["bs"]) == (other["rw"], other["bs"])


def depth_bucket(entries: list[dict]) -> int:
    """The iodepth_level bucket fio counted the most I/Os in (its lower bound)."""
    levels = entries[0]["iodepth_level"]
    return int(max(levels, key=lambda k: levels[k]).lstrip(">="))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_output_of_fio_imports_and_agrees_with_what_fio_reported(tmp_path, version):
    counted: dict[tuple, set] = {}
    for name, text in outputs(version).items():
        job, formats = name.split("_", 1)
        docs, terse, normal = parts(text)
        outcome = read(tmp_path, name, text)
        if "Bad option" in text:  # fio 2.0.9 and 2.0.10 know no unified_rw_reporting: they ran nothing
            assert outcome.reason and "not fio's output" in outcome.reason
            continue
        if outcome.reason and "runtime of 0 ms" in outcome.reason:  # fio 2.1.8 timed a 16 MiB run in 0 ms
            assert any(not side[1] for doc in docs for es in groups_of(doc).values() for side in moved(doc, es).values())
            continue
        assert outcome.reason is None, (name, outcome.reason)
        last = [r for r in outcome.rows if r["source_output"] == max(r["source_output"] for r in outcome.rows)]
        if docs:  # a --status-interval file: the last report, the whole run (fio 2.1.8's reports, their runtimes
            check_against_json(docs[-1], last)  # 2 s, 3 s, 113 s, 114 s, 115 s, 3 s, are not one run's: each its own)
        if "normal" in formats:
            rows = read(tmp_path, f"{name}-normal", normal).rows if docs else outcome.rows
            check_normal(normal, rows, job)
            if docs:  # the same run as the JSON: normal output's digits
                check_same_run(rows, last, {"bw": 0, "iops": 6e-3, "lat": 1e-2, "ns": 10})
        if terse and (docs or "terse" in formats):
            rows = read(tmp_path, f"{name}-terse", "\n".join(terse) + "\n").rows
            for row in rows:
                assert row["read_from"].count("derived") >= 2 and row["bs"] == TRUTH[row["source_job"]][1]
            if docs:  # the same run: terse's KiB and usec
                check_same_run(rows, last, {"bw": 1024, "iops": 1e-3, "lat": 1e-6, "ns": 5})  # JSON: %.2f usec to 2.13
                for row in rows:
                    entries = groups_of(docs[-1])[(row["source_group"], None)]
                    assert row["iodepth"] == depth_bucket(entries)  # fio's own iodepth_level, not the job's wish
        if job in FIXED_SIZE:
            for row in (r for r in outcome.rows if r["status"] == "ok"):
                counted.setdefault((job, row["source_group"], row["host"].split(":")[0][-12:]), set()).add(
                    row["io_bytes"])
    for key, sizes in counted.items():  # separate runs of fixed-size jobs, each format: the bytes fio counted, alike
        assert len(sizes) == 1, (key, sizes)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_folder_of_every_output_of_fio_imports_at_once(tmp_path, version):
    """The version's folder as a user has it: every output imported into one campaign folder, which reads back;
    fio's complaint where it ran nothing (``Bad option``) left aside by its content, not refused."""
    folder = tmp_path / version
    folder.mkdir()
    for name, text in outputs(version).items():
        (folder / f"{name}.out").write_text(text)
    summary = importer.run_import([str(folder)], tmp_path / "out", NAMING)
    refused = {Path(o.path).name: o.reason for o in summary.refused}
    assert {n for n, why in refused.items() if "runtime of 0 ms" not in why} == set()
    ran_nothing = sum("Bad option" in text for text in outputs(version).values())
    assert summary.aside == ({"text not fio's output": ran_nothing} if ran_nothing else {})
    table = results.load(tmp_path / "out")
    assert len(table) == sum(len(o.rows) for o in summary.added)
    assert set(table["fio_version"]) <= {version, ""}  # terse v2 names no version


def test_fio_before_2_0_10_writes_no_json():
    """fio 2.0.9 knows no --output-format: its runs are normal and terse (--minimal) only."""
    assert not any("json" in name for name in outputs("fio-2.0.9"))
    assert "--output-format" not in (BUILT / "fio-2.0.9" / "commands.txt").read_text()
    assert len(VERSIONS) >= 10 and version_of(VERSIONS[0]) < (2, 1) and version_of(VERSIONS[-1]) >= (3, 39)
