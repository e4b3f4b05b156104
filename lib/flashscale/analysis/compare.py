"""Campaigns side by side: different layouts, machines or dates.

    tables = gather(["data/campaigns/study", "data/campaigns/quickstart", "/elsewhere/results.parquet"])
    side_by_side(tables)

A source is a results table (.parquet or .csv), a campaign directory (with results.parquet) or a study directory
(its stages, each a campaign directory). Earlier runs kept with a date suffix (``name.20250101T000000Z``) are
read only when named themselves. ``gather`` is the only function here that reads files.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..measure import fio, results
from .core import point_means
from ..errors import AnalysisError


def _environment(table_path: Path) -> dict:
    info = table_path.parent / "campaign.json"
    env = json.loads(info.read_text()).get("environment", {}) if info.exists() else {}
    return {"hostname": env.get("hostname", ""), "kernel": env.get("kernel", ""), "fio": env.get("fio", "")}


def gather(sources: Sequence[str | Path], skip_missing: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every table under ``sources``: (rows with a ``source`` column, one row per table with where it came from,
    its host, kernel and fio version). A source that does not exist is an error unless ``skip_missing``."""
    frames, where = [], []
    for source in sources:
        path = Path(source)
        if not path.exists() and skip_missing:
            continue
        if not path.exists():
            raise AnalysisError(f"campaign source {str(path)!r} does not exist")
        for table in results.tables_under(path):
            label = path.name if table.parent == path or path.is_file() else f"{path.name}/" + \
                str(table.parent.relative_to(path))
            frame = results.load(table)
            frames.append(frame.assign(source=label))
            where.append({"source": label, "rows": len(frame), "path": str(table), **_environment(table)})
    if not frames:
        return pd.DataFrame(), pd.DataFrame(columns=["source", "rows", "path", "hostname", "kernel", "fio"])
    return pd.concat(frames, ignore_index=True), pd.DataFrame(where)


def side_by_side(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """Best point-mean bandwidth per ``by`` (rows) and source (columns), bytes/s; NaN where a source lacks it.
    Metadata runs (files per second, not bandwidth) are left out."""
    frame = frame[~frame["rw"].isin(list(fio.METADATA_OPS))]
    if frame.empty:
        return pd.DataFrame()
    best = pd.concat([point_means(g).assign(source=s) for s, g in frame.groupby("source", sort=False)],
                     ignore_index=True)
    return best.pivot_table(index=list(by), columns="source", values="bw_bytes", aggfunc="max")


def relative_to(wide: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """``side_by_side`` divided by one source's column (the first by default): 1.0 is the same bandwidth."""
    if wide.empty:
        return wide
    first = first or wide.columns[0]
    return wide.div(wide[first], axis=0)


def sentences(wide: pd.DataFrame) -> list[str]:
    """Per row measured by more than one source: which source is fastest and by how much over the slowest."""
    out = []
    for key, row in wide.iterrows():
        row = row.dropna()
        if len(row) < 2:
            continue
        name = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        if row.max() == row.min():
            out.append(f"{name}: the same in every source ({row.max() / 1e6:,.0f} MB/s).")
            continue
        out.append(f"{name}: {row.idxmax()} is fastest ({row.max() / 1e6:,.0f} MB/s), "
                   f"{row.max() / row.min() - 1:.0%} above {row.idxmin()} ({row.min() / 1e6:,.0f} MB/s).")
    return out
