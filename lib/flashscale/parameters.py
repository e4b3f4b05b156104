"""Notebook parameters: the one table from their UPPER_CASE names to the fields of the specs they set.

Every default lives in its dataclass (``arrays.emulated.ArraySpec``, ``measure.sweep.Sweep``, ``arrays.layouts.Options``,
``campaign.CampaignSpec``); a notebook's ``parameters`` cell restates them for its reader, and
``tests/test_parameters.py`` checks each cell against them. ``split`` sorts given parameters into the keyword
arguments of each part; what is not given takes the field's default.
"""
from __future__ import annotations

from typing import Mapping

# Notebook parameter -> (part of the spec, field): the one table between the two vocabularies. Every default lives
# in its dataclass (ArraySpec, Sweep, layouts.Options, CampaignSpec); tests/test_parameters.py checks the notebooks'
# parameters cells against them.
PARAMETERS: dict[str, tuple[str, str]] = {
    "DEVICES": ("array", "devices"), "DEVICE_SIZE": ("array", "device_size"), "CAP_READ_BPS": ("array", "read_bps"),
    "CAP_WRITE_BPS": ("array", "write_bps"), "BACKING_DIR": ("array", "backing_root"),
    "RW": ("sweep", "rw"), "BS": ("sweep", "bs"), "NUMJOBS": ("sweep", "numjobs"), "IODEPTH": ("sweep", "iodepth"),
    "REPETITIONS": ("sweep", "repetitions"), "WARMUP": ("sweep", "warmup"), "RUNTIME_S": ("sweep", "runtime_s"),
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
    "PRECONDITION_PASSES": ("spec", "precondition_passes"),
}
# Parameters whose None or empty value means "none": the field's default (None, or nothing to wipe) applies.
OPTIONAL_PARAMETERS = {"BACKING_DIR", "TESTBED", "CONFIRM", "WIPE", "MOUNT_DIR", "ERASE_FALLBACK", "SS", "SS_DUR_S",
                       "SS_RAMP_S", "USE_DEVICES"}

PARTS = ("array", "sweep", "options", "spec")


def split(given: Mapping[str, object]) -> dict[str, dict]:
    """The parameters of ``given`` that set a spec's field, as keyword arguments per part (lists become tuples);
    names that are not campaign parameters (a notebook's own, such as ``REFERENCE``) are left out."""
    parts: dict[str, dict] = {part: {} for part in PARTS}
    for name, value in given.items():
        if name not in PARAMETERS or (name in OPTIONAL_PARAMETERS and value in (None, "", [], ())):
            continue
        part, field_name = PARAMETERS[name]
        parts[part][field_name] = tuple(value) if isinstance(value, list) else value
    return parts
