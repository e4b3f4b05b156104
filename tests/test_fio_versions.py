"""fio's output of every version read as that version wrote it: the samples of fio 2.0.10, 2.1.10, 2.16, 2.21 and
3.1 (written field by field from their stat.c by tests/golden/imported/make_samples.py, from one known run) give
that run back; fio 3.33's own outputs (json, json+, terse v3/v4/v5, client/server) are read as fio itself computes
them: its percentiles from its json+ buckets, its "All clients" from its hosts' entries, its terse from its JSON."""
from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale.errors import FioError
from flashscale.measure import fio_output
from flashscale.measure.fio_import import reader, terse, versions

HERE = Path(__file__).parent / "golden" / "imported"
spec = importlib.util.spec_from_file_location("make_samples", HERE / "make_samples.py")
samples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)

LATENCIES_NS = samples.latencies_ns()
RUN_BW_BYTES = 1000 * samples.RUN["total_ios"] * samples.RUN["bs"] // samples.RUN["runtime_ms"]  # fio's own formula


def read(name: str) -> dict:
    return reader.read_output((HERE / name).read_text(), name)


def row_of(data: dict, group: int = 0) -> dict:
    entries = fio_output.groups(data)[group]
    entry = entries[0] if len(entries) == 1 else versions.group_entry(entries)
    return fio_output.parse({"fio version": data["fio version"], "jobs": [entry]})


def expected_percentiles(unit_ns: int, group_nr: int) -> dict[str, float]:
    """What fio of that unit (1000: usec, fio 2.x; 1: ns, fio 3.x) listed for the run, in ns: its buckets built
    with plat_val_to_idx, walked as calc_clat_percentiles walks them (the sample script's transliteration)."""
    plat = [0] * (group_nr << samples.PLAT_BITS)
    for value in LATENCIES_NS:
        plat[samples.plat_val_to_idx(value // unit_ns, group_nr)] += 1
    found = dict(zip(samples.DEFAULT_PERCENTILES, samples.calc_clat_percentiles(plat, len(LATENCIES_NS))))
    return {name: found[float(key)] * unit_ns for name, key in fio_output.CLAT_PERCENTILES.items()
            if name != "clat_p90_ns"}


@pytest.mark.parametrize("name, unit_ns, how", [
    ("fio-2.0.10.json", 1000, versions.FROM_KIB), ("fio-2.16_jsonplus.json", 1000, versions.FROM_KIB),
    ("fio-2.21_jsonplus.json", 1000, versions.FROM_BYTES), ("fio-3.1.json", 1, versions.FROM_BYTES)])
def test_each_version_gives_the_run_back_in_bytes_and_ns(name, unit_ns, how):
    data = read(name)
    row = row_of(data)
    assert row["bw_bytes"] == RUN_BW_BYTES  # every version: io_bytes (KiB or bytes) x 1000 // runtime
    assert row["io_bytes"] == samples.RUN["total_ios"] * samples.RUN["bs"]
    in_unit = [v // unit_ns for v in LATENCIES_NS]
    mean = sum(in_unit) / len(in_unit) * unit_ns
    # fio-2.0.10 printed floats with 2 decimals (json.c "%.2f"): the mean to 0.005 usec
    assert row["clat_mean_ns"] == pytest.approx(mean, abs=5 if name == "fio-2.0.10.json" else 1e-3)
    for column, value in expected_percentiles(unit_ns, 29 if unit_ns == 1 else 19).items():
        assert row[column] == value, column
    assert how in data["jobs"][0]["_read_from"]
    assert ("clat_ns, lat_ns (ns)" if unit_ns == 1 else "clat, lat (usec x 1000)") in data["jobs"][0]["_read_from"]


def test_fio_2_0_10_keys_its_percentiles_with_two_decimals_and_pads_them():
    raw = json.loads((HERE / "fio-2.0.10.json").read_text())  # the duplicate "0.00" keys collapse into one
    assert "99.90" in raw["jobs"][0]["read"]["clat"]["percentile"]
    side = read("fio-2.0.10.json")["jobs"][0]["read"]
    assert side["clat_ns"]["percentile"]["99.900000"] == raw["jobs"][0]["read"]["clat"]["percentile"]["99.90"] * 1000
    assert "0.000000" not in side["clat_ns"]["percentile"]
    assert isinstance(raw["jobs"][0]["read"]["iops"], int)  # an integer before fio 2.2.6


def test_kib_read_as_bytes_is_refused_by_fio_s_own_bw():
    data = json.loads((HERE / "fio-2.0.10.json").read_text())
    data["jobs"][0]["read"]["io_kbytes"] = data["jobs"][0]["read"]["io_bytes"]  # as if io_bytes were bytes
    with pytest.raises(FioError, match="bw 99850 KiB/s disagrees"):
        versions.normalize(data, "x.json")


def test_json_plus_buckets_by_index_and_by_value_give_the_same_percentiles():
    by_index = read("fio-2.16_jsonplus.json")  # fio 2.2.12-2.19, two job entries (no group_reporting)
    by_value = read("fio-2.21_jsonplus.json")  # fio 2.20 on, one entry
    merged = versions.group_entry(fio_output.groups(by_index)[0])
    assert merged["_jobs"] == 2 and merged["read"]["io_bytes"] == by_value["jobs"][0]["read"]["io_bytes"]
    assert merged["read"]["clat_ns"]["percentile"] == {
        k: v for k, v in by_value["jobs"][0]["read"]["clat_ns"]["percentile"].items()
        if float(k) in versions.WANTED}
    assert versions.plat_idx_to_val(127) == 127 and versions.plat_idx_to_val(128) == 129


def jsonplus_sides():
    for name in ("fio333_grouped_jsonplus.json", "fio333_one_terse5_jsonplus.txt"):
        data = fio_output.load_output((HERE / name).read_text())
        for entry in data.get("jobs", data.get("client_stats", [])):
            for direction in ("read", "write"):
                clat = entry[direction]["clat_ns"]
                if clat.get("N") and "percentile" in clat:  # fio's "All clients" lists none
                    yield f"{name}:{entry['jobname']}:{direction}", clat


@pytest.mark.parametrize("where, clat", list(jsonplus_sides()))
def test_percentiles_from_json_plus_buckets_are_fio_s_own(where, clat):
    """fio 3.33 wrote both its percentiles and the buckets they came from: ours, from the buckets, are its."""
    listed = {float(k): v for k, v in clat["percentile"].items()}
    found = versions.percentiles_from_bins({int(k): n for k, n in clat["bins"].items()}, listed, clat["N"])
    assert found == listed, where


def test_a_group_reported_job_by_job_sums_as_fio_s_all_clients_does():
    """fio's client sums every host's jobs with sum_thread_stats into "All clients": so does group_entry."""
    data = read("fio333_client_2servers.json")
    jobs = [e for e in data["client_stats"] if e["jobname"] != "All clients"]
    everyone = next(e for e in data["client_stats"] if e["jobname"] == "All clients")
    merged = versions.group_entry(jobs)
    side, theirs = merged["read"], everyone["read"]
    assert side["io_bytes"] == theirs["io_bytes"] and side["bw_bytes"] == theirs["bw_bytes"]
    assert side["iops"] == pytest.approx(theirs["iops"], rel=1e-9)
    for kind in ("clat_ns", "lat_ns"):
        assert side[kind]["mean"] == pytest.approx(theirs[kind]["mean"], rel=1e-9)
        assert side[kind]["stddev"] == pytest.approx(theirs[kind]["stddev"], rel=1e-6)
    assert side["clat_ns"]["N"] == theirs["clat_ns"]["N"]
    # json, not json+: no buckets to merge, so each percentile is the worst job's, a bound said as one
    for key, value in side["clat_ns"]["percentile"].items():
        assert value == max(job["read"]["clat_ns"]["percentile"][key] for job in jobs)
    assert "the worst job's" in merged["_read_from"][-1]


def test_terse_and_json_plus_of_one_run_agree_to_fio_s_usec():
    text = (HERE / "fio333_one_terse5_jsonplus.txt").read_text()
    terse_text, json_text = text.split("\n{", 1)
    short, full = terse.read_terse(terse_text, "t"), reader.read_output("{" + json_text, "j")
    assert short["_format"] == "terse v5" and full["_format"] == "json+"
    a, b = fio_output.parse(short), fio_output.parse(full)
    # terse keeps whole KiB moved: the rate to a KiB over the run
    assert abs(a["bw_bytes"] - b["bw_bytes"]) <= 1024 * 1000 / (1000 * b["runtime_s"])
    assert a["clat_mean_ns"] == pytest.approx(b["clat_mean_ns"], abs=0.001)  # "%f" of usec: to the ns
    for column in ("clat_p50_ns", "clat_p99_ns", "clat_p999_ns", "clat_p9999_ns"):
        assert b[column] - 1000 < a[column] <= b[column]  # fio's ns / 1000, cut down, x 1000


@pytest.mark.parametrize("version", [2, 3, 4])
def test_terse_versions_give_each_job_of_each_group(version):
    data = read(f"fio333_groups_terse{version}.txt")
    assert data["_format"] == f"terse v{version}" and data["fio version"] == ("" if version == 2 else "fio-3.33")
    groups = fio_output.groups(data)
    assert sorted(groups) == [0, 1] and [len(v) for v in groups.values()] == [2, 2]
    reads, writes = row_of(data, 0), row_of(data, 1)
    assert reads["read_bw_bytes"] > 0 and reads["write_bw_bytes"] == 0
    assert writes["write_bw_bytes"] > 0 and writes["read_bw_bytes"] == 0


def test_a_terse_line_that_is_not_fio_s_is_named():
    with pytest.raises(FioError, match="terse line 1: not a terse v3 line"):
        terse.read_terse("3;fio-3.33;x;0;0;1;2;3\n", "t.txt")


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("   \n", "empty"), ('{"fio version": "fio-3.33", "jobs": [', "truncated"),
    ('{"name": "not fio"}', "not fio's output"), ("hello\n", "not fio's output"),
    ("t: (groupid=0, jobs=1): err= 0: pid=1\n", "not fio.s output: no JSON object and no terse line")])
def test_what_is_not_fio_output_is_refused_with_the_reason(text, words):
    with pytest.raises(FioError, match=words):
        reader.read_output(text, "f")


def test_the_version_string_of_a_git_build_is_read():
    assert versions.version_of("fio-3.1-46-gabc123") == (3, 1, 0)
    assert versions.version_of("fio-2.0.10") == (2, 0, 10) and versions.version_of("x") is None


SAMPLES = sorted(p.name for p in HERE.glob("*.json") if "status_interval" not in p.name)  # one output a file
mutations = st.tuples(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(
    [None, "x", -1, 0, 1.5, [], {}, True])), min_size=1, max_size=4))


def _paths(value, prefix=()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from _paths(inner, (*prefix, index))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations)
def test_any_damaged_output_gives_rows_or_a_fio_error(mutation):
    name, changes = mutation
    data = fio_output.load_output((HERE / name).read_text())
    data.pop("_preamble")
    for index, value in changes:
        paths = list(_paths(data)) if isinstance(data, (dict, list)) else []
        if not paths:
            break
        *parent, key = paths[index % len(paths)]
        holder = data
        for step in parent:
            holder = holder[step]
        holder[key] = copy.deepcopy(value)
    try:
        out = reader.read_output(json.dumps(data), name)
        for entries in fio_output.groups(out).values():
            entry = entries[0] if len(entries) == 1 else versions.group_entry(entries)
            row = fio_output.parse({"fio version": out.get("fio version", ""), "jobs": [entry]}, name)
            assert not math.isinf(row["bw_bytes"])
    except FioError as exc:
        assert str(exc)
