"""What differs between the two machines and environments of a comparison, listed before any change is read.

    facts(record, rows)      one side's facts, flat: its campaign.json's environment and spec (``environment.kernel``,
                             ``spec.array.cap_scale``, ...) and what its rows say (``rows.fio_version``, ...)
    differences(a, b)        the facts whose values differ, the likeliest causes first (``FIRST``)

Pure: the caller reads the records (``measure.sides``). A fact one side lacks is said as missing on that side,
never left out: an imported folder that recorded no kernel is not the same kernel. What differs by design between
any two campaigns (their run's id, name, folder, notes, when each import ran) is not a difference (``NOT_COMPARED``).
"""
from __future__ import annotations

import json
import re

import pandas as pd

NOT_COMPARED = re.compile(r"^(run_id|kind|campaign|notes|imports|resumed|added_at|spec\.(name|data_dir|resume|"
                          r"force_resume|dry_run|calibrations|archive)|environment\.software\.dirty)(\.|$)")
# the likeliest causes of a change first: the kernel, fio, the machine, its CPUs, the devices, the caps an emulated
# array held, the layouts' parameters, then the software that measured
FIRST = ("environment.kernel", "environment.fio", "rows.fio_version", "environment.hostname", "rows.host",
         "governor", "environment.cpus", "model", "firmware", "devices", "spec.array.", "spec.options.",
         "rows.chunk_bytes", "spec.", "environment.backend", "environment.place", "rows.",
         "environment.software.lock", "environment.software.commit", "environment.software.")
ROW_FACTS = ("fio_version", "host", "backend", "ioengine", "direct", "chunk_bytes", "fs", "mount_options",
             "source_format")
MISSING = "(not recorded)"
MOST_VALUES = 8  # a row fact with more distinct values is said by its count


def _flat(value, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            _flat(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = json.dumps(list(value), default=str, sort_keys=True)
    else:
        out[prefix] = "" if value is None else str(value)


def facts(record: dict | None, rows: pd.DataFrame | None = None) -> dict[str, str]:
    """One side's facts as text, by dotted name: ``record`` (a campaign.json, or {}) flattened, lists as JSON, and
    per ``ROW_FACTS`` column of ``rows`` its distinct values ("fio-3.33", "fio-3.33 | fio-3.36")."""
    out: dict[str, str] = {}
    _flat(record if isinstance(record, dict) else {}, "", out)
    out = {k: v for k, v in out.items() if not NOT_COMPARED.match(k)}
    for column in ROW_FACTS:
        if rows is not None and column in rows.columns:
            values = sorted({str(v) for v in rows[column].dropna()})
            if values:
                out[f"rows.{column}"] = (" | ".join(values) if len(values) <= MOST_VALUES
                                         else f"{len(values)} values")
    return out


def _rank(name: str) -> int:
    return next((i for i, first in enumerate(FIRST) if first in name), len(FIRST))


def differences(a: dict[str, str], b: dict[str, str]) -> pd.DataFrame:
    """The facts (``facts``) whose values differ: ``what``, ``a``, ``b`` (``MISSING`` on the side without it),
    ordered by ``FIRST``, then by name."""
    names = sorted(set(a) | set(b), key=lambda n: (_rank(n), n))
    rows = [{"what": n, "a": a.get(n, MISSING), "b": b.get(n, MISSING)} for n in names
            if a.get(n, MISSING) != b.get(n, MISSING)]
    return pd.DataFrame(rows, columns=["what", "a", "b"])


def combined(sides: list[dict[str, str]]) -> dict[str, str]:
    """The facts of several campaigns taken as one side (an archive query): each fact's distinct values, " | "
    between them, ``MISSING`` among them where a campaign lacks it."""
    if len(sides) == 1:
        return dict(sides[0])
    names = sorted({n for side in sides for n in side})
    return {n: " | ".join(sorted({side.get(n, MISSING) for side in sides})) for n in names}
