"""Notebook parameters: the one table from their UPPER_CASE names to the fields of the specs they set, with each
one's type and meaning (a pydantic model of the whole set, checked before anything is touched).

Every default lives in its dataclass (``arrays.emulated.ArraySpec``, ``measure.sweep.Sweep``, ``arrays.layouts.Options``,
and the campaign's own spec, ``campaign.CampaignSpec`` or ``cluster.ClusterSpec``: the ``parts`` given to ``model``,
``check``, ``split`` and ``markdown``, each a part's name mapped to its dataclass). A set of parts has the parameters
whose field its dataclasses have: a campaign's has ``LAYOUTS`` and no ``HOSTS``, a cluster's the reverse. A
notebook's ``parameters`` cell restates the defaults for its reader, and ``tests/test_parameters.py`` checks each cell
against them. ``check`` refuses a parameter of the wrong type or out of range, naming it and its value, every problem
at once; every number has an upper bound (``MAX_*``: a week of seconds, 1 PiB, 1 TB/s...), generous for a real study,
so a typo is refused before it is priced; ``split`` sorts given parameters into the keyword arguments of each part;
what is not given takes the field's default. ``markdown`` is the README's list of campaign parameters.
``check_campaign_name`` is the one rule of a campaign's name, which the schema and both specs apply.
``read_ceilings`` reads ``CEILINGS`` (a ceilings file, relative to the checkout as ``DATA_DIR`` is, or a mapping)
for the schema's check and for ``CampaignSpec``, which keeps the values it gives.

The rules (``campaigns.rules.RULES``) are what one parameter needs of another for a notebook to write its report (a ``REFERENCE`` among the
``LAYOUTS``, a ``BASELINE_BS`` among the ``BS``, enough ``DEVICES`` for each layout...), read off each notebook's
analysis. They may read a notebook's own parameters (``NOTEBOOK_PARAMETERS``: ``REFERENCE``, ``BASELINE_BS``...),
which set no field; a rule applies when every parameter it reads is given (a notebook that does not declare one
is not held to it). ``check`` applies them after the types, naming every parameter involved with its value, so
``flashscale run`` refuses a campaign that cannot be reported when it loads (``execute``), and a notebook run by hand
when it builds its spec (``CampaignSpec.from_parameters``, ``ClusterSpec.from_parameters``): before anything is
measured.
"""
from __future__ import annotations

from dataclasses import MISSING, fields
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Optional, Union

import yaml
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, ValidationError, create_model

from ..arrays.emulated_cluster import STORAGE as CLUSTER_STORAGE
from ..arrays.emulated import cap_scale_problem
from ..arrays.erase import METHODS as ERASE_METHODS
from ..arrays.guard import confirmation
from ..analysis.prediction.ceilings import Ceilings
from ..arrays.layouts import FILE_SYSTEMS
from ..errors import ConfigError
from ..layouts import MEASURABLE
from ..paths import project_root
from .rules import MAX_BLOCK, MAX_BYTES, MAX_DEVICE_COUNT, MAX_RUNS, MAX_SECONDS, closest, rule_problems

# Notebook parameter -> (part of the spec, field): the one table between the two vocabularies. Every default lives
# in its dataclass (ArraySpec, Sweep, layouts.Options, and the "spec": CampaignSpec or ClusterSpec);
# tests/test_parameters.py checks the notebooks' parameters cells against them.
PARAMETERS: dict[str, tuple[str, str]] = {
    "DEVICES": ("array", "devices"), "DEVICE_SIZE": ("array", "device_size"), "CAP_READ_BPS": ("array", "read_bps"),
    "CAP_WRITE_BPS": ("array", "write_bps"), "CAP_SCALE": ("array", "cap_scale"),
    "CAP_FIT": ("array", "cap_fit"), "BACKING_DIR": ("array", "backing_root"),
    "RW": ("sweep", "rw"), "BS": ("sweep", "bs"), "NUMJOBS": ("sweep", "numjobs"), "IODEPTH": ("sweep", "iodepth"),
    "REPETITIONS": ("sweep", "repetitions"), "PRECISION": ("sweep", "precision"),
    "MAX_REPETITIONS": ("sweep", "max_repetitions"), "BATCH_REPS": ("sweep", "batch_reps"),
    "START_AHEAD": ("sweep", "start_ahead"),
    "BUILDS": ("sweep", "builds"), "BRACKET": ("sweep", "bracket"),
    "TAX_MARGIN": ("spec", "tax_margin"), "REFERENCE": ("spec", "reference"),
    "WARMUP": ("sweep", "warmup"), "RUNTIME_S": ("sweep", "runtime_s"),
    "RAMP_S": ("sweep", "ramp_s"), "FILE_SIZE": ("sweep", "size"), "PRECONDITION": ("sweep", "precondition"),
    "SS": ("sweep", "ss"), "SS_DUR_S": ("sweep", "ss_dur_s"), "SS_RAMP_S": ("sweep", "ss_ramp_s"),
    "STEADY_ROUNDS": ("sweep", "steady_rounds"), "PRECONDITION_ROUNDS_MAX": ("sweep", "rounds_max"),
    "FS": ("options", "fs"), "CHUNK_BYTES": ("options", "chunk_bytes"), "MOUNT_OPTIONS": ("options", "mount_options"),
    "ERASE": ("options", "erase"), "ERASE_FALLBACK": ("options", "erase_fallback"),
    "STRIPE_SINGLE": ("options", "stripe_single"),
    "LAYOUTS": ("spec", "layouts"), "EMULATION": ("spec", "emulation"), "HOST": ("spec", "host"),
    "DATA_DIR": ("spec", "data_dir"), "TESTBED": ("spec", "testbed"), "CONFIRM": ("spec", "confirm"),
    "DRY_RUN": ("spec", "dry_run"), "WIPE": ("spec", "wipe"), "MOUNT_DIR": ("spec", "mount_dir"),
    "MOUNT_DEVICES": ("spec", "mount_devices"), "USE_DEVICES": ("spec", "use_devices"),
    "PRECONDITION_PASSES": ("spec", "precondition_passes"), "RESUME": ("spec", "resume"),
    "FORCE_RESUME": ("spec", "force_resume"), "ON_FAILURE": ("spec", "on_failure"),
    "ADAPTIVE": ("sweep", "adaptive"), "VM_ACCEL": ("spec", "vm_accel"), "CEILINGS": ("spec", "ceilings"),
    "CALIBRATION": ("spec", "calibrations"), "ARCHIVE": ("spec", "archive"),
    "CPU_LATENCY_US": ("sweep", "cpu_latency_us"),
    # a cluster campaign's own (fields of cluster.ClusterSpec, which a CampaignSpec does not have)
    "HOSTS": ("spec", "hosts"), "LINK_BPS": ("spec", "link_bps"), "SUBNET": ("spec", "subnet"),
    "STORAGE": ("spec", "storage"), "REMOTE_HOSTS": ("spec", "remote"),
    # a cluster over real hosts reached by SSH (campaigns.over_ssh)
    "INVENTORY": ("spec", "inventory"), "HOST_GROUP": ("spec", "host_group"), "KNOWN_HOSTS": ("spec", "known_hosts"),
    "SSH_IDENTITY": ("spec", "ssh_identity"), "SSH_CONFIG": ("spec", "ssh_config"),
    "CLOCK_TOLERANCE_S": ("spec", "clock_tolerance_s"),
}
# Parameters whose None or empty value means "none": the field's default (None, or nothing to wipe) applies.
OPTIONAL_PARAMETERS = {"PRECISION", "CAP_FIT", "CALIBRATION", "ADAPTIVE", "BACKING_DIR", "TESTBED", "CONFIRM", "WIPE", "MOUNT_DIR", "ERASE_FALLBACK", "SS", "SS_DUR_S",
                       "SS_RAMP_S", "USE_DEVICES", "REMOTE_HOSTS", "CEILINGS",
                       "CPU_LATENCY_US", "INVENTORY", "KNOWN_HOSTS", "SSH_IDENTITY", "SSH_CONFIG", "ARCHIVE"}

PARTS = ("array", "sweep", "options", "spec")
MAX_DEVICES = MAX_DEVICE_COUNT  # emulated devices (256): each a loop device and a backing file of this machine's
MAX_NUMJOBS = 4000  # fio's jobs in one process: fio 3.33 ran 4000 and refused 4095 ("maximum number of jobs")
# The upper bounds of the other numbers, generous for a real study and refused past it (as a typo, before pricing;
# those a notebook's own numbers share too in rules: MAX_SECONDS, MAX_BYTES, MAX_BLOCK, MAX_RUNS):
MAX_IODEPTH = 65536  # io_uring's most entries a ring (32768) and aio-max-nr's default (65536)
MAX_RATE_BPS = 10**12  # a device's cap or a host's link, bytes/s: 1 TB/s (a PCIe 5 x16 link carries 64 GB/s)
MAX_HOSTS = 1024  # hosts a cluster campaign runs a point on
MAX_MOUNT_DEVICES = 4096  # devices under a mounted file system (a cluster file system's)
MAX_LATENCY_US = 10**6  # CPU_LATENCY_US: a second
MAX_CLOCK_S = 3600.0  # CLOCK_TOLERANCE_S: an hour
NAME_MAX = 200  # characters of a campaign's name (its folder's: a file system allows 255 bytes)


def check_campaign_name(name: object, what: str = "campaign name") -> str:
    """``name`` if it is a plain folder name that stays inside the data directory (not empty, at most ``NAME_MAX``
    characters, no ``/``, ``\\`` or NUL, no leading dot); else a ConfigError naming it as ``what``."""
    if (not isinstance(name, str) or not name or len(name) > NAME_MAX or any(c in name for c in "/\\\0")
            or name.startswith(".")):
        raise ConfigError(f"{what} {name!r} must be a plain, non-empty folder name of at most {NAME_MAX} "
                          "characters (no / and no leading dot: it must stay inside the data directory)")
    return name


def shown(value: object, most: int = 200) -> str:
    """``value`` as a message repeats it: its repr, cut at ``most`` characters."""
    said = repr(value)
    return said if len(said) <= most else f"{said[:most]}... ({len(said)} characters)"


def known_layouts(names: object) -> object:
    """LAYOUTS's type: every name one a campaign measures (``layouts.MEASURABLE``); each unknown one named, with the
    closest known name, before any rule reads them (a REFERENCE is blamed only when every layout is known). None is
    refused by the spec that needs one (a cluster's emulated hosts take none)."""
    unknown = [name for name in names if name not in MEASURABLE]
    if unknown:
        said = [f"{shown(name, 40)}{closest(name, MEASURABLE)}" for name in unknown[:5]]
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ValueError(f"unknown layout(s) {', '.join(said)}{more}: choose from {', '.join(MEASURABLE)}")
    return names


def _cap_scale(value: object) -> object:
    """CAP_SCALE's type: a list of per-device factors in (0, 1] (their count is a rule: one per device, or none)."""
    problem = cap_scale_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def read_ceilings(value: object) -> dict | None:
    """The ceilings ``CEILINGS`` gives (``analysis.prediction.ceilings.Ceilings``, the format ``flashscale analyze --ceilings``
    reads): a YAML file's (its path, relative to the checkout unless absolute) or a mapping given inline, checked,
    as a plain dict of the values given (numbers, keys sorted: what campaign.json records); None for none (None,
    "" or an empty mapping). ConfigError naming the bad value: a file missing or not YAML, an unknown key, a value
    that is not a positive number."""
    if value is None or (isinstance(value, (str, Mapping)) and not value):
        return None
    if isinstance(value, (str, Path)):
        file = Path(value) if Path(value).is_absolute() else project_root() / value
        where = "" if Path(value).is_absolute() else f" ({file}: a path is relative to the checkout)"
        mapping = ceilings_file(file, str(value), where)
    elif isinstance(value, Mapping):
        mapping = value
    else:
        raise ConfigError(f"{value!r} is neither the path of a ceilings file nor a mapping of ceiling: value")
    if isinstance(mapping, Mapping):
        odd = [f"{k} = {v!r}" for k, v in mapping.items() if not isinstance(k, str) or isinstance(v, bool)]
        if odd:
            raise ConfigError(f"ceiling parameter(s) {', '.join(odd)}: each must be a name and a number")
    checked = Ceilings.from_mapping(mapping)
    return {k: getattr(checked, k) for k in sorted(mapping) if mapping[k] is not None} or None


def ceilings_file(file: Path, named: str, where: str = "") -> object:
    """What the ceilings file ``file`` holds (the YAML ``analysis.prediction.ceilings.Ceilings.from_mapping`` checks), {} for an
    empty one; ConfigError naming it as ``named`` (and ``where`` it was looked for) when it is missing or not YAML.
    The one reader of a ceilings file: CEILINGS's and ``flashscale analyze``/``plan --ceilings``'s."""
    if not file.is_file():
        raise ConfigError(f"ceilings file {named!r} does not exist{where}")
    try:
        return yaml.safe_load(file.read_text()) or {}
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"ceilings file {named!r} cannot be read as YAML: {exc}") from None


def _accepted_by(check):
    """A parameter's type from ``check``, which raises ConfigError on a bad value (run now, before anything runs):
    CEILINGS's ``read_ceilings``, ARCHIVE's ``_archive``."""
    def accepted(value: object) -> object:
        try:
            check(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value
    return accepted


def _archive(value: object) -> None:
    """ARCHIVE's check: a path ``measure.archive.checked_path`` accepts."""
    from ..measure.archive import checked_path  # here, not above: the archive's pandas only where one is given

    checked_path(value)


def _whole_bytes(value: object) -> object:
    """A size parameter's check before its type: a size written as text ('4k', '1MiB') is refused, saying the bytes
    it reads as (``units.read_size``, the one reader of sizes), since each notebook computes with the number its
    parameters cell is given; anything else goes on to the type's own check."""
    if not isinstance(value, str):
        return value
    from ..measure.units import read_size  # here, not above: the units' pandas only for a size given as text

    try:
        size = read_size(value, "")
    except ConfigError as exc:
        raise ValueError(str(exc).strip()) from None
    raise ValueError(f"{value!r} is {size} bytes (k = 1024, as fio's bs=4k): a size parameter takes whole bytes, "
                     f"write {size}")


def whole(least: int, most: int) -> object:
    """A whole number from ``least`` to ``most``: beyond them refused, naming the value and the bound."""
    return Annotated[int, Field(ge=least, le=most)]


def wholes(least: int, most: int) -> object:
    """A list (or tuple) of ``whole(least, most)``."""
    return Union[list[whole(least, most)], tuple[whole(least, most), ...]]


def sized(least: int, most: int) -> object:
    """A size, whole bytes from ``least`` to ``most`` ('4k' refused with the bytes it reads as)."""
    return Annotated[int, BeforeValidator(_whole_bytes), Field(ge=least, le=most)]


Seconds, AtLeastZeroSeconds, Runs = whole(1, MAX_SECONDS), whole(0, MAX_SECONDS), whole(1, MAX_RUNS)
Rate = whole(0, MAX_RATE_BPS)  # bytes/s; 0: uncapped
Bytes = sized(1, MAX_BLOCK)  # a block or a stripe unit
Names = Union[list[str], tuple[str, ...]]
PlainName = Annotated[str, AfterValidator(check_campaign_name)]
Mappings = Union[list[Mapping[str, Any]], tuple[Mapping[str, Any], ...]]

# Name -> (type, meaning): what each parameter takes. Its default is its dataclass field's (``markdown`` shows it).
SCHEMA: dict[str, tuple[object, str]] = {
    "CAMPAIGN": (PlainName, "the campaign's folder under DATA_DIR and reports/: a plain name, no / and no leading dot"),
    "DEVICES": (Annotated[int, Field(gt=0, le=MAX_DEVICES)], f"emulated devices (at most {MAX_DEVICES})"),
    "DEVICE_SIZE": (sized(512 * 2**20, MAX_BYTES), "bytes per emulated device (512 MiB to 1 PiB; no more than "
                                                  "the backing directory's free space)"),
    "CAP_READ_BPS": (Rate, f"read cap per emulated device, bytes/s, at most {MAX_RATE_BPS / 1e12:g} TB/s; 0: "
                           "uncapped (no truth to hold runs to)"),
    "CAP_WRITE_BPS": (Rate, f"write cap per emulated device, bytes/s, at most {MAX_RATE_BPS / 1e12:g} TB/s; 0: "
                            "uncapped (no truth to hold runs to)"),
    "CAP_SCALE": (Annotated[Any, AfterValidator(_cap_scale)],
                  "per-device factors of the caps, each in (0, 1], one per device (e.g. [1, 1, 1, 0.5]: the 4th at "
                  "half the cap); empty: every device at the full cap. The emulated array's loop devices only"),
    "CAP_FIT": (Optional[Literal["lower", "refuse"]],
                "where this machine, measured with the caps lifted, carries less than twice what the caps ask of it "
                "(measure.harness): lower the caps to fit (lower) or refuse the campaign (refuse); None: "
                "$FLASHSCALE_CAP_FIT, else lower"),
    "BACKING_DIR": (Optional[str], "where the emulated devices' backing files go (None: /dev/shm when it has room)"),
    "RW": (Union[str, Names], "fio rw modes: read, write, randread, randwrite, rw, randrw; or filecreate, filestat, "
                              "filedelete"),
    "BS": (Union[list[Bytes], tuple[Bytes, ...]], "block sizes, bytes (each at most 1 GiB)"),
    "NUMJOBS": (wholes(1, MAX_NUMJOBS),
                f"total fio jobs over all targets (at most {MAX_NUMJOBS}: fio refuses more in one process)"),
    "IODEPTH": (wholes(1, MAX_IODEPTH), f"queue depth per job (at most {MAX_IODEPTH})"),
    "REPETITIONS": (Runs, f"measured runs per point (without PRECISION; at most {MAX_RUNS})"),
    "PRECISION": (Optional[Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]],
                  "repeat each point until its 95% interval's half-width is within this share of its mean (on the "
                  "log scale), e.g. 0.02, from 2 runs to MAX_REPETITIONS; None: REPETITIONS runs each point"),
    "MAX_REPETITIONS": (whole(2, MAX_RUNS), f"with PRECISION: the most runs of a point (2 to {MAX_RUNS})"),
    "TAX_MARGIN": (float,  # its range is a rule's (rules: check_margin), named with the others
                   "two numbers within +/- this fraction are the same: the tax's verdict, and with PRECISION the "
                   "margin the group-sequential tax test decides against while a point runs"),
    "REFERENCE": (str, "the layout the tax is measured against (jbod: N x single where jbod is not measured), and "
                       "with PRECISION the one the group-sequential tax test decides against while a point runs"),
    "BUILDS": (Runs, f"each layout built this many times (at most {MAX_RUNS}) (a new mkfs, a new array each), each "
                         "swept: builds as replicates; rows carry build (0 when built once)"),
    "BRACKET": (bool, "measure the tax reference again after the layouts taxed against it (built anew, every point, "
                      "rows of phase bracket): where it drifted beyond TAX_MARGIN at a point (significant at 5%), "
                      "the report says so and withholds that point's tax verdicts"),
    "BATCH_REPS": (bool, "run a point's repetitions in one fio process, separated by stonewall (fio's start paid "
                         "once a point; each run its own row and raw files; devices monitored over the point as a "
                         "whole); not with PRECISION, which decides after each run"),
    "START_AHEAD": (bool, "start each run's fio in the ramp of the run before it and hold it at a gate until that "
                          "run ends (fio's start, about 0.25 s, paid outside the time between runs; only where the "
                          "run makes no files and the run before ramps at least 1 s)"),
    "WARMUP": (bool, "one warm-up run per point before the measured ones (kept, flagged, never analysed)"),
    "RUNTIME_S": (Seconds, f"seconds per run (time based; at most {MAX_SECONDS}, a week)"),
    "RAMP_S": (AtLeastZeroSeconds, f"seconds of ramp before fio measures (at most {MAX_SECONDS}, a week)"),
    "FILE_SIZE": (sized(1, MAX_BYTES), "bytes per fio job file (at most 1 PiB)"),
    "PRECONDITION": (bool, "write every file a read may touch before a layout's first point"),
    "SS": (Optional[str], "fio's steady-state criterion, e.g. iops_slope:0.3% (None: off)"),
    "SS_DUR_S": (Optional[Seconds], f"seconds over which fio judges SS (at most {MAX_SECONDS})"),
    "SS_RAMP_S": (Optional[AtLeastZeroSeconds], f"seconds before fio starts judging SS (at most {MAX_SECONDS})"),
    "STEADY_ROUNDS": (bool, "repeat the precondition in rounds until SNIA steady state"),
    "PRECONDITION_ROUNDS_MAX": (whole(5, MAX_RUNS), f"most precondition rounds (5 to {MAX_RUNS})"),
    "FS": (Literal[FILE_SYSTEMS], "file system of each layout: " + " | ".join(FILE_SYSTEMS)),
    "CHUNK_BYTES": (Bytes, "stripe unit, bytes (a power of two from 4096 to 1 GiB)"),
    "MOUNT_OPTIONS": (str, "mount options of each layout, comma-separated"),
    "ERASE": (Literal[ERASE_METHODS], "the erase before each layout: " + " | ".join(ERASE_METHODS)),
    "ERASE_FALLBACK": (Optional[Literal[ERASE_METHODS]], "the erase to use where ERASE is not supported (None: refuse)"),
    "STRIPE_SINGLE": (bool, "give single and jbod file systems the stripe geometry too (su=chunk, sw=1)"),
    "LAYOUTS": (Annotated[Names, AfterValidator(known_layouts)], "layouts to measure: single, jbod, btrfs-raid0, ... (arrays.layouts), mounted"),
    "EMULATION": (Literal["auto", "loop", "directory", "vm"],
                  "auto | loop | directory | vm: where an emulated campaign runs (vm: NVMe devices in a VM with a "
                  "real kernel, md and LVM included; make deps-vm)"),
    "VM_ACCEL": (Literal["auto", "kvm", "tcg"], "auto | kvm | tcg: the VM's accelerator (auto: KVM when a short "
                 "probe boots, else TCG)"),
    "HOST": (str, "the host fio runs on, as the rows name it"),
    "DATA_DIR": (str, "where measurements go; relative to the checkout"),
    "TESTBED": (Optional[str], "a test bed file naming real devices by identity (None: the emulated array)"),
    "CONFIRM": (Optional[Annotated[Any, AfterValidator(confirmation)]],
                "with TESTBED: the identities you confirm, as strings (papermill reads -p CONFIRM 0123 as a number: "
                "the refusal says how to pass it)"),
    "DRY_RUN": (bool, "with TESTBED: print the exact commands and stop, touching nothing"),
    "WIPE": (Union[bool, str, Names, None], "with TESTBED: signature types the erase may remove; True: any"),
    "MOUNT_DIR": (Optional[str], "the existing mount point the layout mounted measures inside"),
    "MOUNT_DEVICES": (whole(1, MAX_MOUNT_DEVICES), "devices under MOUNT_DIR, for its efficiency against N x baseline "
                                                      f"(at most {MAX_MOUNT_DEVICES})"),
    "USE_DEVICES": (Optional[whole(1, MAX_DEVICES)],
                    f"a test bed campaign on its first N devices only (at most {MAX_DEVICES})"),
    "PRECONDITION_PASSES": (whole(0, MAX_RUNS), "on a test bed: each device written in full this often after its "
                                                f"erase (at most {MAX_RUNS})"),
    "RESUME": (bool, "continue the interrupted campaign in its own folder: finished runs are kept and not run "
                     "again, failed ones are measured again"),
    "FORCE_RESUME": (bool, "resume even when the campaign or the machine changed (the report says so)"),
    "ON_FAILURE": (Literal["continue", "stop"], "after a failed fio run: continue the sweep, or stop it"),
    "ADAPTIVE": (Optional[Literal["numjobs", "iodepth"]], "explore this axis until throughput saturates instead of "
                                                        "measuring its whole grid (None: the whole grid)"),
    "CEILINGS": (Optional[Annotated[Any, AfterValidator(_accepted_by(read_ceilings))]],
                 "the ceilings the predictions stated before each layout is built hold it to: the path of a YAML file "
                 "as flashscale analyze --ceilings reads (relative to the checkout), or its mapping inline, e.g. "
                 "{memory_bw_bytes: 2e10}; memory, the network's links and PCIe (a link given here wins over the one "
                 "sysfs names) become terms; None: this machine's CPUs and its devices' PCIe links only"),
    "CALIBRATION": (Optional[Names], "campaign folders (names under DATA_DIR, or paths) of the same layouts on fewer "
                                     "devices, or a layout's file system on one: each layer's own cost they measured "
                                     "is stated with this campaign's predictions, before its layouts are built (never "
                                     "from the layout and device count it predicts); None: this campaign's and the "
                                     "baseline's own rows only"),
    "ARCHIVE": (Optional[Annotated[Any, AfterValidator(_accepted_by(_archive))]],
                "an archive file (flashscale archive; relative to the checkout) the campaign is added to when it "
                "finishes, said in its notes; None: not archived"),
    "CPU_LATENCY_US": (Optional[whole(0, MAX_LATENCY_US)],
                       f"every run holds the CPUs to idle states they leave within this many µs (at most "
                       f"{MAX_LATENCY_US}; /dev/cpu_dma_latency; 0: they poll), so no wake-up from deep idle shapes a "
                       "curve; None: the machine's own idle states"),
    "HOSTS": (wholes(1, MAX_HOSTS), f"host counts to run each point on, each at most {MAX_HOSTS} (emulated: "
                                    "max(HOSTS) hosts are made)"),
    "LINK_BPS": (Optional[whole(1, MAX_RATE_BPS)], f"each emulated host's link cap, bytes/s of frames, at most "
                                                 f"{MAX_RATE_BPS:.0e} "
                                                 "(None: uncapped)"),
    "SUBNET": (str, "the private IPv4 range of the emulated hosts (refused if in use on this machine)"),
    "STORAGE": (Union[Literal[tuple(CLUSTER_STORAGE)], list[Literal[tuple(CLUSTER_STORAGE)]],
                      tuple[Literal[tuple(CLUSTER_STORAGE)], ...]],
                "where each emulated host's data lives, each at most once: " + " | ".join(CLUSTER_STORAGE)),
    "REMOTE_HOSTS": (Optional[Mappings], "real hosts, a mapping each: name, address, and ssh_port, user, mount_dir, "
                                         "local_dir, devices, link_bps (without KNOWN_HOSTS: port of a fio server "
                                         "you started, and mount_dir)"),
    "INVENTORY": (Optional[str], "an Ansible inventory file (INI or YAML) naming the real hosts, read without Ansible"),
    "HOST_GROUP": (str, "the inventory's group whose hosts the campaign runs on"),
    "KNOWN_HOSTS": (Optional[str], "the known_hosts file the real hosts' keys are checked against: hosts reached "
                                   "over SSH (never without it)"),
    "SSH_IDENTITY": (Optional[str], "the private key ssh logs in to the hosts with (None: ssh's own choice)"),
    "SSH_CONFIG": (Optional[str], "an ssh_config file for the hosts (jump hosts...), or none (None: none; "
                                  "~/.ssh/config is never read, and no file changes the options flashscale pins)"),
    "CLOCK_TOLERANCE_S": (Annotated[float, Field(gt=0, le=MAX_CLOCK_S, allow_inf_nan=False)],
                          f"how far a host's clock may be off this machine's, s (at most {MAX_CLOCK_S:g})"),
}


def _fields(parts: Mapping[str, type]) -> dict[str, tuple[str, str]]:
    """The parameters of ``parts``: those whose part is given and whose field its dataclass has."""
    names = {part: {f.name for f in fields(cls)} for part, cls in parts.items()}
    return {name: (part, field) for name, (part, field) in PARAMETERS.items() if field in names.get(part, ())}


def _default(part_class: type, name: str):
    found = next(f for f in fields(part_class) if f.name == name)
    return found.default if found.default is not MISSING else found.default_factory()


@lru_cache(maxsize=None)
def _model(parts: tuple[tuple[str, type], ...]):
    classes = dict(parts)
    defaults = {name: _default(classes[part], field) for name, (part, field) in _fields(classes).items()}
    defaults["CAMPAIGN"] = "quickstart"
    spec = {name: (kind, Field(defaults[name], description=meaning)) for name, (kind, meaning) in SCHEMA.items()
            if name in defaults}
    return create_model("CampaignParameters", __config__=ConfigDict(strict=True, extra="allow"), **spec)


def model(parts: Mapping[str, type]):
    """The pydantic model of the parameters of ``parts`` (each part of ``PARTS`` mapped to its dataclass)."""
    return _model(tuple(sorted(parts.items())))


def check(given: Mapping[str, object], parts: Mapping[str, type], where: str = "parameters") -> None:
    """ConfigError naming every parameter of ``given`` of the wrong type or out of range, with its value, then
    every rule (``RULES``) that ``given`` breaks; other names that are not parameters of ``parts`` (a notebook's
    own) are left to the notebook."""
    known = model(parts).model_fields
    ours = {k: v for k, v in given.items() if k in known and not (k in OPTIONAL_PARAMETERS and v in ("", [], ()))}
    try:
        model(parts).model_validate(ours)
    except ValidationError as exc:
        first = {}  # a parameter's first error: a list's, not the tuple's its Union also tried
        for err in exc.errors():
            first.setdefault(err["loc"][0], err["msg"])
        problems = [f"{name}={shown(ours.get(name))}: {msg}" for name, msg in first.items()]
        raise ConfigError(f"{where}: " + "; ".join(problems)) from None
    broken = rule_problems(given, known)
    if broken:
        raise ConfigError(f"{where}: " + "; ".join(broken))


def markdown(parts: Mapping[str, type]) -> str:
    """The campaign parameters as a Markdown table (name, default, meaning), for the README."""
    lines = ["| parameter | default | meaning |", "| --- | --- | --- |"]
    for name, info in model(parts).model_fields.items():
        default = list(info.default) if isinstance(info.default, tuple) else info.default
        meaning = info.description.replace("|", "\\|")  # a pipe would end the cell
        lines.append(f"| `{name}` | `{default!r}` | {meaning} |")
    return "\n".join(lines)


def split(given: Mapping[str, object], parts: Mapping[str, type]) -> dict[str, dict]:
    """The parameters of ``given`` that set a field of ``parts``, as keyword arguments per part (lists become
    tuples); names that are not parameters of ``parts`` (a notebook's own, such as ``REFERENCE``) are left out."""
    ours = _fields(parts)
    split_up: dict[str, dict] = {part: {} for part in parts}
    for name, value in given.items():
        if name not in ours or (name in OPTIONAL_PARAMETERS and value in (None, "", [], ())):
            continue
        part, field_name = ours[name]
        split_up[part][field_name] = tuple(value) if isinstance(value, list) else value
    return split_up
