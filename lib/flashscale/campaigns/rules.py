"""What one notebook parameter needs of another for a notebook to write its report: a ``REFERENCE`` among the
``LAYOUTS``, a ``BASELINE_BS`` among the ``BS``, enough ``DEVICES`` for each layout... read off each notebook's
analysis. ``parameters.check`` applies them after the types, naming every parameter involved with its value.

    NOTEBOOK_PARAMETERS   a notebook's own parameters that rules read (they set no field of a spec)
    RULES                 each rule: the parameters it reads and what it says when they disagree
    rule_problems(given, known)   what ``given`` breaks, one sentence each
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional

from ..measure import reference
from ..analysis.significance import check_margin
from ..arrays.emulated import cap_scale_problem
from ..errors import ConfigError
from ..layouts import MEASURABLE, describe

# A notebook's own parameters that rules read (each notebook's cell gives its default); REFERENCE and TAX_MARGIN also
# set the campaign's spec, for the sequential tax test while points run (a cluster's leaves them to its notebook).
NOTEBOOK_PARAMETERS: dict[str, str] = {
    "REFERENCE": "the layout the tax is measured against (quickstart, 03_layout_tax, 11_job_file)",
    "BASELINE_BS": "the block size of the baseline, bytes (quickstart, 01_baseline, 02_scaling, 03_layout_tax)",
    "TAX_MARGIN": "two numbers within +/- this fraction are the same (the tax, a reproduction, a prediction: "
                  "quickstart, 03_layout_tax, 10_cluster, 11_job_file)",
    "LAYOUT": "the one layout the notebook measures (04_latency_iops, 05_metadata, 07_consistency)",
    "DEVICE_COUNTS": "the device counts the notebook measures, each a campaign of that many DEVICES (02_scaling)",
    "NRFILES": "the file counts of each metadata point, files per job (05_metadata)",
    "FILE_BYTES": "bytes of each file a metadata workload makes (05_metadata)",
    "LOG_INTERVAL_MS": "ms between two samples of fio's bandwidth log (07_consistency)",
    "JOB_FILE_REPETITIONS": "runs of each point of the job file (11_job_file)",
    "BONNIE_PROCESSES": "bonnie++ processes at once, each point (09_applications)",
    "BONNIE_FILE_MIB": "MiB of each bonnie++ process's file (09_applications)",
    "BONNIE_FILES_K": "thousands of files bonnie++ creates (09_applications)",
    "PGBENCH_SCALES": "pgbench's scale factors, each 16 MB of tables (09_applications)",
    "PGBENCH_CLIENTS": "pgbench's clients, each point (09_applications)",
    "PGBENCH_DURATION_S": "seconds of each pgbench run (09_applications)",
    "TRANSFER_FILES": "files of each transfer (09_applications)",
    "TRANSFER_FILE_MIB": "MiB of each transferred file (09_applications)",
    "TRANSFER_STREAMS": "parallel copies of a transfer, each point (09_applications)",
}
MAX_DEVICE_COUNT = 256  # as DEVICES (parameters.MAX_DEVICES, which imports this module): each count is a DEVICES
# Upper bounds the schema's numbers (parameters.MAX_*) and a notebook's own share, generous for a real study:
MAX_SECONDS = 7 * 86400  # a run, its ramp, a steady-state window: a week (a 24 h run is a real study)
MAX_BYTES = 2**50  # a device or a file: 1 PiB (a 100 TB device is a real study)
MAX_BLOCK = 2**30  # a block size or stripe unit: 1 GiB (fio holds bs x iodepth of buffers a job)
MAX_RUNS = 1000  # runs of a point, builds of a layout, precondition rounds or passes
MAX_FILES = 10**9  # files a metadata or transfer workload makes
# A notebook's own numbers (each declared by the notebooks in NOTEBOOK_PARAMETERS): (least, most, a list of them).
NOTEBOOK_NUMBERS: dict[str, tuple[int, int, bool]] = {
    "BASELINE_BS": (1, MAX_BLOCK, False), "NRFILES": (1, MAX_FILES, True), "FILE_BYTES": (0, MAX_BYTES, False),
    "LOG_INTERVAL_MS": (1, 3_600_000, False), "JOB_FILE_REPETITIONS": (1, MAX_RUNS, False),
    "BONNIE_PROCESSES": (1, 4000, True), "BONNIE_FILE_MIB": (1, MAX_BYTES // 2**20, False),
    "BONNIE_FILES_K": (1, MAX_FILES // 1000, False), "PGBENCH_SCALES": (1, 100_000, True),
    "PGBENCH_CLIENTS": (1, 10_000, True), "PGBENCH_DURATION_S": (1, MAX_SECONDS, False),
    "TRANSFER_FILES": (1, MAX_FILES, False), "TRANSFER_FILE_MIB": (1, MAX_BYTES // 2**20, False),
    "TRANSFER_STREAMS": (1, 4000, True),
}
NOTEBOOK_PARAMETERS = {name: meaning if name not in NOTEBOOK_NUMBERS else  # each number's meaning says its range
                       f"{meaning}: {'each ' if NOTEBOOK_NUMBERS[name][2] else ''}{NOTEBOOK_NUMBERS[name][0]:,} to "
                       f"{NOTEBOOK_NUMBERS[name][1]:,}" for name, meaning in NOTEBOOK_PARAMETERS.items()}


def closest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the known name closest to ``name``, or nothing when none is close."""
    match = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


@dataclass(frozen=True)
class Rule:
    """What a notebook's report needs of ``names`` together: ``problem`` reads the given parameters (each of
    ``names`` among them) and says what is wrong, naming every parameter involved with its value, or None."""

    names: tuple[str, ...]
    problem: Callable[[Mapping[str, Any]], Optional[str]]


def _reference_measured(p: Mapping[str, Any]) -> Optional[str]:
    """The reference among the LAYOUTS; or, for jbod, its stand-in (``measure.reference``): N x the single device,
    measured beside an array to put a tax on."""
    layouts = list(p["LAYOUTS"])
    if reference.reference_of(layouts, p["REFERENCE"]) is not None:
        return None
    single = reference.SINGLE in layouts
    instead = ("" if p["REFERENCE"] != reference.STANDS_IN else
               ", or add an array beside 'single' (the tax is then measured against N x single)" if single else
               ", or add 'single' (the tax is then measured against N x single)")
    return (f"REFERENCE={p['REFERENCE']!r} is not among LAYOUTS={layouts!r}: the tax is measured against "
            f"the reference layout; add it to LAYOUTS or pick one of them{instead}")


def _baseline_measured(p: Mapping[str, Any]) -> Optional[str]:
    if p["BASELINE_BS"] in p["BS"]:
        return None
    return (f"BASELINE_BS={p['BASELINE_BS']!r} is not among BS={list(p['BS'])!r}: the baseline is one device's best "
            "at that block size, measured with the others; add it to BS or pick one of them")


def _device_count(p: Mapping[str, Any]) -> tuple[str, Optional[int]]:
    """The parameter that says how many devices a campaign has, and its value: DEVICES on the emulated array,
    USE_DEVICES on a test bed (None without it: the test bed's own count, known only when its file is read)."""
    name = "USE_DEVICES" if p.get("TESTBED") else "DEVICES"
    count = p.get(name)
    return name, count if isinstance(count, int) else None


def _enough_devices(what: str) -> Callable[[Mapping[str, Any]], Optional[str]]:
    """The rule that each layout of ``what`` (LAYOUTS, or a notebook's one LAYOUT) has the devices it needs (its
    descriptor's ``min_devices``: mdadm refuses a RAID-0 of one device, mkfs.btrfs a raid10 of one)."""
    def problem(p: Mapping[str, Any]) -> Optional[str]:
        count_name, count = _device_count(p)
        chosen = [p[what]] if isinstance(p[what], str) else list(p[what])
        short = [said for name in chosen if count is not None and name in MEASURABLE
                 for said in [describe(name).devices_problem(count)] if said]
        if not short:
            return None
        instead = "choose another LAYOUT" if what == "LAYOUT" else f"leave {'it' if len(short) == 1 else 'them'} out"
        return (f"{what}={p[what]!r} with {count_name}={count!r}: " + "; ".join(short)
                + f"; raise {count_name} or {instead}")
    return problem


def _known_layout(p: Mapping[str, Any]) -> Optional[str]:
    """A notebook's one LAYOUT (04, 05, 07) is a layout a campaign measures, as each of LAYOUTS is."""
    name = p["LAYOUT"]
    if isinstance(name, str) and name in MEASURABLE:
        return None
    return (f"LAYOUT={name!r} is not a layout flashscale measures{closest(name, MEASURABLE) if isinstance(name, str) else ''}: "
            f"choose one of {', '.join(MEASURABLE)}")


def _device_counts(p: Mapping[str, Any]) -> Optional[str]:
    """DEVICE_COUNTS (02): a list of whole numbers, each a DEVICES of its own (1 to ``MAX_DEVICE_COUNT``)."""
    counts = p["DEVICE_COUNTS"]
    if isinstance(counts, (list, tuple)) and counts and all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_DEVICE_COUNT for n in counts):
        return None
    return (f"DEVICE_COUNTS={counts!r:.200} must list device counts, each a whole number from 1 to "
            f"{MAX_DEVICE_COUNT} (each is a campaign of that many DEVICES)")


def _array_to_tax(p: Mapping[str, Any]) -> Optional[str]:
    """The tax compares layouts on the same number of devices: its reference must be an array, of 2 or more."""
    count_name, count = _device_count(p)
    if p["REFERENCE"] == "single":
        return (f"REFERENCE='single' is one device whatever {count_name}={count!r}: the tax compares layouts on the "
                "same number of devices, so no array would get one; pick an array layout such as 'jbod'")
    if count is None or count >= 2:
        return None
    return (f"REFERENCE={p['REFERENCE']!r} with {count_name}={count!r}: the tax compares layouts of the same "
            f"devices, and one device makes no array; raise {count_name} to at least 2")


def _remote_hosts_enough(p: Mapping[str, Any]) -> Optional[str]:
    hosts, remote = list(p["HOSTS"]), p["REMOTE_HOSTS"]
    if not remote or max(hosts) <= len(remote):
        return None
    return (f"HOSTS={hosts!r} asks for {max(hosts)} hosts but REMOTE_HOSTS names {len(remote)}: name more hosts "
            "or lower HOSTS")


def _cap_scale_per_device(p: Mapping[str, Any]) -> Optional[str]:
    problem = cap_scale_problem(p["CAP_SCALE"], p["DEVICES"])
    return f"CAP_SCALE={p['CAP_SCALE']!r}: {problem}" if problem else None


# The backend EMULATION picks before the machine is read (auto: the emulated array, ``campaign.EMULATIONS``).
PICKED = {"auto": "loop", "loop": "loop", "directory": "directory", "vm": "vm"}
SCALED = "loop"  # the one backend that caps its devices one by one: the emulated array (``Place.caps_each_device``)


def _cap_scale_backend(p: Mapping[str, Any]) -> Optional[str]:
    """CAP_SCALE caps the emulated array's loop devices one by one: a VM's, a test bed's, a cluster's devices and
    plain directories refuse it (the place the campaign picks checks it again: ``Place.check``)."""
    if not p["CAP_SCALE"]:
        return None
    backend, why = (("testbed", f"TESTBED={p.get('TESTBED')!r}") if p.get("TESTBED") else
                    ("cluster", f"HOSTS={p.get('HOSTS')!r}") if "HOSTS" in p else
                    (PICKED.get(p.get("EMULATION", "auto"), "loop"), f"EMULATION={p.get('EMULATION')!r}"))
    if backend == SCALED:
        return None
    return (f"CAP_SCALE={list(p['CAP_SCALE'])!r} with {why}: the {backend} backend cannot cap its devices one by one "
            "(only the emulated array's loop devices); leave CAP_SCALE empty")


MAX_POINTS = 10_000  # points of one sweep: a day of 8 s runs; a grid beyond it is a typo (the study's largest: 320)


def _points_bounded(p: Mapping[str, Any]) -> Optional[str]:
    """The sweep's grid (RW x BS x NUMJOBS x IODEPTH) at most ``MAX_POINTS``: counted before it is expanded, so a
    list typed a thousand times too long is refused at once, not expanded into memory."""
    axes = {name: 1 if isinstance(p[name], str) else len(p[name]) for name in ("RW", "BS", "NUMJOBS", "IODEPTH")
            if isinstance(p[name], (str, list, tuple))}
    points = 1
    for count in axes.values():
        points *= count
    if points <= MAX_POINTS:
        return None
    return (f"{' x '.join(f'{n} {name}' for name, n in axes.items())} is {points:,} points, more than the "
            f"{MAX_POINTS:,} a sweep may have: shorten the lists")


def _margin(p: Mapping[str, Any]) -> Optional[str]:
    try:
        check_margin(p["TAX_MARGIN"])
    except ConfigError as exc:
        return f"TAX_MARGIN={p['TAX_MARGIN']!r}: {exc}"
    return None


def _whole_between(name: str, least: int, most: int, listed: bool) -> Callable[[Mapping[str, Any]], Optional[str]]:
    """The rule that a notebook's own number ``name`` is a whole number from ``least`` to ``most`` (or, ``listed``, a
    non-empty list of them): what ``NOTEBOOK_NUMBERS`` says of it."""
    def problem(p: Mapping[str, Any]) -> Optional[str]:
        value = p[name]
        numbers = value if listed and isinstance(value, (list, tuple)) else [value] if not listed else []
        if numbers and all(isinstance(n, int) and not isinstance(n, bool) and least <= n <= most for n in numbers):
            return None
        return (f"{name}={value!r:.200} must be {'a list of whole numbers, each' if listed else 'a whole number'} "
                f"from {least} to {most:,}")
    return problem


# Each notebook's needs, found by reading its analysis (the notebooks that declare the parameters in brackets).
RULES: tuple[Rule, ...] = (
    Rule(("REFERENCE", "LAYOUTS"), _reference_measured),         # quickstart, 03_layout_tax, 11: the tax
    Rule(("REFERENCE", "DEVICES"), _array_to_tax),               # the same: its reference an array (03: 2 or more)
    Rule(("BASELINE_BS", "BS"), _baseline_measured),             # quickstart, 01, 02, 03: the baseline
    Rule(("LAYOUTS", "DEVICES"), _enough_devices("LAYOUTS")),    # every layout built on the campaign's devices
    Rule(("DEVICE_COUNTS",), _device_counts),                    # 02: each count a DEVICES
    Rule(("LAYOUT",), _known_layout),                            # 04, 05, 07: the one layout, a known one
    Rule(("LAYOUT", "DEVICES"), _enough_devices("LAYOUT")),      # 04, 05, 07: the one layout
    Rule(("RW", "BS", "NUMJOBS", "IODEPTH"), _points_bounded),   # every measuring notebook: its grid, bounded
    Rule(("TAX_MARGIN",), _margin),                              # quickstart, 03, 10, 11: the margin of equivalence
    Rule(("HOSTS", "REMOTE_HOSTS"), _remote_hosts_enough),       # 10_cluster on real hosts
    Rule(("CAP_SCALE", "DEVICES"), _cap_scale_per_device),       # a factor per emulated device, or none
    Rule(("CAP_SCALE",), _cap_scale_backend),                    # the loop devices only (not vm, cluster, testbed)
    *(Rule((name,), _whole_between(name, *bounds)) for name, bounds in NOTEBOOK_NUMBERS.items()),  # each in range
)


def rule_problems(given: Mapping[str, Any], known: Iterable[str]) -> list[str]:
    """What ``given`` breaks of ``RULES``, one sentence each: a rule applies when each parameter it reads is given
    and is a notebook's own or one of ``known`` (whose types were checked)."""
    readable = set(known) | set(NOTEBOOK_PARAMETERS)
    return [said for rule in RULES if all(name in given and name in readable for name in rule.names)
            for said in [rule.problem(given)] if said]
