"""Write the samples of older fio versions in this folder, field by field as fio's own source of each version wrote
them (fio is not installed at those versions here; its history is: github.com/axboe/fio, read at each tag).

    .venv/bin/python tests/golden/imported/make_samples.py

Every sample records one known run (``RUN``: 50,000 reads of 4 KiB in 2,003 ms, each read's completion latency drawn
once from a fixed seed), so a test can hold what the reader recovers from each version to the run itself. Each
version's builder writes what its ``add_ddir_status_json`` (stat.c) computed from that run, in its units, printed
as its json.c printed (``json_print_value``: floats ``%.2f`` to fio-2.12, ``%f`` from 2.13; fio's layout of
``"key" : value``, duplicate keys kept). ``SOURCES`` names, per sample, the function and the lines at the tag that
wrote each field. Fields the reader does not read (iodepth_level, latency_us, disk_util...) are left out.
"""
from __future__ import annotations

import math
import random
from pathlib import Path

HERE = Path(__file__).parent
RUN = {"rw": "randread", "bs": 4096, "total_ios": 50_000, "runtime_ms": 2003, "iodepth": 1}
PLAT_BITS = 6
DEFAULT_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)  # init.c
LIST_MAX = 20  # FIO_IO_U_LIST_MAX_LEN (stat.h)

# sample -> (tag, [(field, "file:line function")]): where each field the sample holds was written.
SOURCES = {
    "fio-2.0.10.json": ("fio-2.0.10", [
        ("fio version, jobs", "stat.c:1287,1289 show_run_stats"),
        ("jobname, groupid, error", "stat.c:921-923 show_thread_status_json"),
        ("io_bytes = io_bytes >> 10 (KiB)", "stat.c:709 add_ddir_status_json"),
        ("bw = ((1000 * io_bytes) / runt) / 1024 (KiB/s, integer)", "stat.c:703,710 add_ddir_status_json"),
        ("iops = (1000 * total_io_u) / runt (integer)", "stat.c:704,711 add_ddir_status_json"),
        ("runtime (ms)", "stat.c:712 add_ddir_status_json"),
        ("slat, clat, lat: min, max, mean, stddev (usec)", "stat.c:719,730,760 add_ddir_status_json"),
        ("clat.percentile keys %2.2f, padded with 0.00", "stat.c:745-751 add_ddir_status_json"),
        ("percentile values: plat_idx_to_val of calc_clat_percentiles", "stat.c:82,118 (usec buckets)"),
        ("floats %.2f", "json.c:327 json_print_value"),
    ]),
    "fio-2.1.10_client.json": ("fio-2.1.10", [
        ("client_stats", "client.c:99 fio_client_json_init"),
        ("hostname, port", "client.c:828-829 json_object_add_client_info"),
        ("All clients (the hosts summed)", "client.c:856 handle_ts"),
        ("io_bytes (KiB), bw (KiB/s), iops (integer), runtime", "stat.c:702-705 add_ddir_status_json"),
        ("slat, clat, lat (usec)", "stat.c:712,723,753 add_ddir_status_json"),
        ("clat.percentile keys %f", "stat.c:744 add_ddir_status_json"),
        ("floats %.2f", "json.c:356 json_print_value"),
    ]),
    "fio-2.16_jsonplus.json": ("fio-2.16", [
        ("timestamp, time, global options", "stat.c:1752-1756 __show_run_stats"),
        ("elapsed, job options", "stat.c:1172,1176 show_thread_status_json"),
        ("io_bytes (KiB), bw (KiB/s), iops (float), runtime, total_ios", "stat.c:903-907 add_ddir_status_json"),
        ("slat, clat, lat (usec)", "stat.c:916,927,969 add_ddir_status_json"),
        ("clat.bins keyed by bucket index, FIO_IO_U_PLAT_BITS/VAL/NR", "stat.c:952-961 add_ddir_status_json"),
        ("floats %f", "json.c:350 json_print_value"),
    ]),
    "fio-2.21_jsonplus.json": ("fio-2.21", [
        ("io_bytes (bytes), io_kbytes, bw (KiB/s), iops, runtime, total_ios", "stat.c:922-927 add_ddir_status_json"),
        ("slat, clat, lat (usec)", "stat.c:936,947,988 add_ddir_status_json"),
        ("clat.bins keyed by plat_idx_to_val, non-zero only", "stat.c:974-977 add_ddir_status_json"),
    ]),
    "fio-3.1.json": ("fio-3.1", [
        ("io_bytes, io_kbytes, bw (KiB/s), iops, runtime, total_ios (no bw_bytes)", "stat.c:987-992 "
                                                                                   "add_ddir_status_json"),
        ("slat_ns, clat_ns, lat_ns (ns)", "stat.c:1001,1012,1053 add_ddir_status_json"),
        ("two reporting groups (stonewall), groupid 0 and 1", "stat.c:1207 show_thread_status_json"),
    ]),
}


def plat_val_to_idx(value: int, group_nr: int) -> int:
    """stat.c ``plat_val_to_idx``: the bucket of a latency (usec in fio 2.x, ns in 3.x)."""
    msb = value.bit_length() - 1 if value else 0
    if msb <= PLAT_BITS:
        return value
    error_bits = msb - PLAT_BITS
    index = ((error_bits + 1) << PLAT_BITS) + (((1 << PLAT_BITS) - 1) & (value >> error_bits))
    return min(index, group_nr * (1 << PLAT_BITS) - 1)


def plat_idx_to_val(index: int) -> int:
    """stat.c ``plat_idx_to_val``."""
    if index < (2 << PLAT_BITS):
        return index
    error_bits = (index >> PLAT_BITS) - 1
    return int((1 << (error_bits + PLAT_BITS)) + ((index % (1 << PLAT_BITS)) + 0.5) * (1 << error_bits))


def calc_clat_percentiles(plat: list[int], total: int, plist=DEFAULT_PERCENTILES) -> list[int]:
    """stat.c ``calc_clat_percentiles``, as written in C: buckets in index order, the running sum against
    p / 100 x N for each percentile of the sorted list."""
    out, running, j = [], 0, 0
    for index, count in enumerate(plat):
        running += count
        while j < len(plist) and running >= plist[j] / 100.0 * total:
            out.append(plat_idx_to_val(index))
            j += 1
        if j == len(plist):
            break
    return out


def latencies_ns(seed: int = 2013) -> list[int]:
    """The run's completion latencies: log-normal around 80 us, one read in a hundred ten times slower."""
    rng = random.Random(seed)
    return [int(rng.lognormvariate(math.log(80_000), 0.25) * (10 if rng.random() < 0.01 else 1))
            for _ in range(RUN["total_ios"])]


def stats(values: list[float]) -> tuple[float, float, float, float]:
    n = len(values)
    mean = sum(values) / n
    return min(values), max(values), mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


class Printer:
    """fio's json.c layout: ``"key" : value`` pairs, two spaces a level; pairs kept in order, duplicates too."""

    def __init__(self, float_format: str):
        self.float_format = float_format

    def value(self, value, level: int) -> str:
        if isinstance(value, str):
            return f'"{value}"'
        if isinstance(value, bool) or isinstance(value, int):
            return str(int(value))
        if isinstance(value, float):
            return self.float_format % value
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            pairs = [f'{"  " * (level + 1)}"{k}" : {self.value(v, level + 1)}' for k, v in value]
            return "{\n" + ",\n".join(pairs) + "\n" + "  " * level + "}"
        items = [f'{"  " * (level + 1)}{self.value(v, level + 1)}' for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"


def latency(values: list[int]) -> list[tuple]:
    low, high, mean, dev = stats(values)
    return [("min", int(low)), ("max", int(high)), ("mean", mean), ("stddev", dev)]


def percentiles(values: list[int], group_nr: int, key_format: str) -> list[tuple]:
    plat = [0] * (group_nr << PLAT_BITS)
    for value in values:
        plat[plat_val_to_idx(value, group_nr)] += 1
    found = calc_clat_percentiles(plat, len(values))
    pairs = [(key_format % p, v) for p, v in zip(DEFAULT_PERCENTILES, found)]
    return pairs + [("0.00", 0)] * (LIST_MAX - len(pairs))


def bins(values: list[int], group_nr: int, by_index: bool) -> list[tuple]:
    plat = [0] * (group_nr << PLAT_BITS)
    for value in values:
        plat[plat_val_to_idx(value, group_nr)] += 1
    if by_index:
        return [(str(i), n) for i, n in enumerate(plat)] + [
            ("FIO_IO_U_PLAT_BITS", PLAT_BITS), ("FIO_IO_U_PLAT_VAL", 1 << PLAT_BITS),
            ("FIO_IO_U_PLAT_NR", group_nr << PLAT_BITS)]
    return [(str(plat_idx_to_val(i)), n) for i, n in enumerate(plat) if n]


def side(version: tuple, clat_ns: list[int], ios: int, runtime: int, json_plus: bool = False) -> list[tuple]:
    """One direction as ``add_ddir_status_json`` of ``version`` wrote it."""
    io_bytes = ios * RUN["bs"]
    bw = ((1000 * io_bytes) // runtime) // 1024 if runtime else 0
    iops = ((1000 * ios) // runtime if runtime else 0) if version < (2, 2, 6) else (
        1000.0 * ios / runtime if runtime else 0.0)
    ns = version >= (2, 99)
    unit = [v if ns else v // 1000 for v in clat_ns]  # fio 2.x timed in usec
    total = [v + (1000 if ns else 1) for v in unit]
    group_nr = 29 if ns else 19
    key = "%2.2f" if version < (2, 0, 14) else "%f"
    if version >= (2, 21):  # bytes, and KiB beside them
        moved = [("io_bytes", io_bytes), ("io_kbytes", io_bytes >> 10)]
    else:  # KiB under the name io_bytes
        moved = [("io_bytes", io_bytes >> 10)]
    out = moved + [("bw", bw), ("iops", iops), ("runtime", runtime)]
    out += [("total_ios", ios)] if version >= (2, 1, 14) else []
    suffix = "_ns" if ns else ""
    empty = [("min", 0), ("max", 0), ("mean", 0.0), ("stddev", 0.0)]
    clat = (latency(unit) if ios else empty) + [("percentile", percentiles(unit, group_nr, key) if ios else
                                                       [("0.00", 0)] * LIST_MAX)]
    if json_plus and ios:
        clat.append(("bins", bins(unit, group_nr, by_index=version < (2, 20))))
    out += [(f"slat{suffix}", empty), (f"clat{suffix}", clat), (f"lat{suffix}", latency(total) if ios else empty)]
    return out + [("bw_min", bw), ("bw_max", bw), ("bw_agg", 100.0 if ios else 0.0), ("bw_mean", float(bw)),
                  ("bw_dev", 0.0)]


def entry(version: tuple, name: str, group: int, clat_ns: list[int], options: list[tuple] | None = None,
          error: int = 0) -> list[tuple]:
    """One job entry as ``show_thread_status_json`` of ``version`` wrote it (a read job: write and trim empty)."""
    ios = len(clat_ns) if not error else 0
    out = [("jobname", name), ("groupid", group), ("error", error)]
    out += [("eta", 0), ("elapsed", 3)] if version >= (2, 2, 9) else []
    out += [("job options", options)] if options else []
    out += [("read", side(version, clat_ns, ios, RUN["runtime_ms"] if ios else 0, json_plus=True))]
    out += [(d, side(version, [], 0, 0)) for d in ("write", "trim")]
    return out + [("usr_cpu", 2.5), ("sys_cpu", 11.25), ("ctx", 50123), ("majf", 0), ("minf", 31)]


def header(version: tuple, options: list[tuple] | None) -> list[tuple]:
    out = [("fio version", "fio-" + ".".join(map(str, version)))]
    if version >= (2, 2, 5):
        out += [("timestamp", 1500000000), ("time", "Fri Jul 14 02:40:00 2017")]
    return out + ([("global options", options)] if options else [])


def write(name: str, version: tuple, document: list[tuple], json_plus: bool) -> None:
    printer = Printer("%.2f" if version < (2, 13) else "%f")
    text = printer.value(document, 0) + "\n"
    if not json_plus:  # plain json: no bins anywhere
        assert '"bins"' not in text
    (HERE / name).write_text(text)
    print(f"{name}: {len(text)} bytes")


def strip_bins(document):
    if isinstance(document, list) and document and isinstance(document[0], tuple):
        return [(k, strip_bins(v)) for k, v in document if k != "bins"]
    if isinstance(document, list):
        return [strip_bins(v) for v in document]
    return document


def main() -> None:
    clat = latencies_ns()
    half = [clat[: len(clat) // 2], clat[len(clat) // 2:]]
    options = [("rw", "randread"), ("bs", "4k"), ("ioengine", "psync"), ("runtime", "2"), ("time_based", "1"),
               ("size", "1g"), ("filename", "/dev/sdb")]
    v = (2, 0, 10)
    write("fio-2.0.10.json", v, strip_bins(header(v, None) + [("jobs", [entry(v, "randread", 0, clat)])]), False)
    v = (2, 1, 10)
    hosts = [entry(v, "randread", 0, part) + [("hostname", f"node{i + 1}"), ("port", 8765)]
             for i, part in enumerate(half)]
    everyone = entry(v, "All clients", 0, clat) + [("hostname", "node2"), ("port", 8765)]
    write("fio-2.1.10_client.json", v, strip_bins(header(v, None) + [("client_stats", hosts + [everyone]),
                                                                     ("disk_util", [])]), False)
    v = (2, 16)
    jobs = [entry(v, "randread", 0, part, [("numjobs", "2")]) for part in half]  # no group_reporting: 2 entries
    write("fio-2.16_jsonplus.json", v, header(v, options) + [("jobs", jobs)], True)
    v = (2, 21)
    write("fio-2.21_jsonplus.json", v, header(v, options + [("group_reporting", "1")]) + [
        ("jobs", [entry(v, "randread", 0, clat, [("numjobs", "1")])])], True)
    v = (3, 1)
    groups = [entry(v, "first", 0, clat, [("numjobs", "1")]),
              entry(v, "second", 1, [], [("numjobs", "1"), ("stonewall", "")], error=5)]
    write("fio-3.1.json", v, strip_bins(header(v, options + [("group_reporting", "1")]) + [("jobs", groups)]), False)


if __name__ == "__main__":
    main()
