"""A study: the numbered notebooks of one campaign sharing one results directory.

    data/campaigns/<campaign>/           the study (``study_dir``)
        study.json                       what each stage ran with, stage by stage
        01_baseline/                     one campaign directory per stage (campaign.json, rows.jsonl, raw/...)
        02_scaling/devices1/, devices2/  a stage measured at several device counts keeps one directory per count
        ...

Each notebook runs its stage with ``run_stage`` (or ``run_device_counts``, ``run_variants``, ``run_per_numa_node``:
every runner returns a ``campaign.CampaignResult``, whose directory is the stage's) and reads what earlier stages
measured with ``load_stage``; ``study_baseline`` gives later stages the baseline ``01_baseline`` chose, so they all
measure against the same single-device number. A rerun of a stage keeps the earlier directory, renamed with its
date, as ``campaign.run`` does; with ``RESUME`` every stage continues its interrupted campaign in place. When
reading, the ``campaign`` column is set to the study's name and a ``stage``
column says which notebook measured the row.
"""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..analysis import baseline_and_tax as analysis
from ..campaigns import campaign, parameters as schema
from ..arrays import can_build
from ..measure import campaign_folder, results, resume
from ..system.devices import System
from ..errors import ConfigError

BASELINE_STAGE = "01_baseline"


def study_dir(parameters: dict) -> Path:
    """The shared results directory of the study named by the notebook's ``CAMPAIGN`` under ``DATA_DIR``."""
    return campaign_folder.data_root(parameters.get("DATA_DIR", "data/campaigns")) / parameters.get("CAMPAIGN", "study")


def stage_spec(stage: str, parameters: dict, extra: Sequence[tuple[str, str]] = (),
               sweep: Mapping[str, object] | None = None, **overrides) -> campaign.CampaignSpec:
    """The campaign spec of one stage: the notebook's parameters (``overrides`` win), results under the study;
    ``sweep`` sets fields of its ``Sweep`` that have no parameter (e.g. ``nrfiles``, ``shared_file``)."""
    params = {**parameters, **overrides}
    params["CAMPAIGN"] = params.pop("STAGE_NAME", stage)
    params["DATA_DIR"] = str(params.pop("STAGE_DIR", study_dir(parameters)))
    spec = campaign.CampaignSpec.from_parameters(**params)
    return replace(spec, sweep=replace(spec.sweep, extra=tuple(extra), **dict(sweep or {})))


def _note_stage(parameters: dict, stage: str, spec: campaign.CampaignSpec) -> None:
    if resume.reanalyzing():  # re-analysed: the study's folder is read, never written
        return
    path = study_dir(parameters) / "study.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    known = json.loads(path.read_text()) if path.exists() else {}
    known[stage] = {"layouts": list(spec.layouts), "devices": spec.array.devices,
                    "sweep": {k: list(v) if isinstance(v, tuple) else v for k, v in spec.sweep.__dict__.items()},
                    "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    path.write_text(json.dumps(known, indent=1, default=str))


def run_stage(stage: str, parameters: dict, extra: Sequence[tuple[str, str]] = (), progress: bool = False,
              sweep: Mapping[str, object] | None = None, baseline_stage: str | None = None,
              **overrides) -> campaign.CampaignResult:
    """Run one stage of the study (a campaign in the study's directory); see ``stage_spec``. ``baseline_stage``
    (``BASELINE_STAGE``): the stage whose single-device rows predict this one's layouts before they are built
    when it measures no ``single`` itself (``campaign.run``'s ``baseline``)."""
    spec = stage_spec(stage, parameters, extra, sweep, **overrides)
    _note_stage(parameters, stage, spec)
    baseline = study_dir(parameters) / baseline_stage if baseline_stage else None
    result = campaign.run(spec, progress=progress, baseline=baseline)
    result.table = _labelled(result.table, parameters.get("CAMPAIGN", "study"), stage)
    return result


def _run_each(stage: str, parameters: dict, runs: Mapping[str, dict], progress: bool,
              **overrides) -> campaign.CampaignResult:
    """The stage once per entry of ``runs``, each a campaign of its own in ``<stage>/<name>/`` (fresh devices and
    file systems). An entry gives ``extra`` and ``sweep`` (as ``stage_spec``), ``overrides`` of parameters, and
    ``columns`` added to its rows. Returns the tables concatenated, the stage's folder, the backend and the notes
    of every run."""
    folder = study_dir(parameters) / stage
    resumed = parameters.get("RESUME") or parameters.get("FORCE_RESUME")
    if not resume.reanalyzing() and (not resumed or not folder.is_dir()):  # re-analysed: read as it is
        folder = campaign_folder.fresh_directory(folder)  # resumed: each run continues its own campaign in the folder
    tables, notes, backend = [], [], "loop"
    for name, run in runs.items():
        spec = stage_spec(stage, parameters, run.get("extra", ()), run.get("sweep"), STAGE_NAME=name,
                          STAGE_DIR=folder, **{**overrides, **run.get("overrides", {})})
        _note_stage(parameters, f"{stage}/{name}", spec)
        result = campaign.run(spec, progress=progress)
        tables.append(result.table.assign(**run.get("columns", {})))
        notes += [note for note in result.notes if note not in notes]
        backend = result.backend
    table = _labelled(pd.concat(tables, ignore_index=True), parameters.get("CAMPAIGN", "study"), stage)
    return campaign.CampaignResult(table, folder, backend, notes)


def run_device_counts(stage: str, parameters: dict, counts: Sequence[int], progress: bool = False,
                      **overrides) -> campaign.CampaignResult:
    """The stage at each device count (one emulated array of that size each, or the first N devices of the test
    bed; ``devices<N>/`` under the stage): the tables concatenated, the backend and the notes of every count."""
    if not counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
        raise ConfigError(f"device counts {list(counts)!r} must be whole numbers of at least 1")
    on_testbed = bool(parameters.get("TESTBED"))
    runs = {f"devices{n}": {"overrides": {"DEVICES": n, "USE_DEVICES": n if on_testbed else None}}
            for n in sorted(set(counts))}
    return _run_each(stage, parameters, runs, progress, **overrides)


def run_variants(stage: str, parameters: dict, variants: Mapping[str, Mapping[str, object]],
                 extra: Sequence[tuple[str, str]] = (), progress: bool = False,
                 **overrides) -> campaign.CampaignResult:
    """The stage once per variant (``<stage>/<variant>/``), each with its own ``Sweep`` fields (as
    ``stage_spec``'s ``sweep``): the tables concatenated with a ``variant`` column, the backend and the notes of
    every variant. Variants run in the order given."""
    if not variants:
        raise ConfigError("variants {} must name at least one variant")
    for name in variants:
        schema.check_campaign_name(name, what="variant")
    runs = {name: {"extra": extra, "sweep": fields, "columns": {"variant": name}} for name, fields in variants.items()}
    return _run_each(stage, parameters, runs, progress, **overrides)


def _labelled(table: pd.DataFrame | None, study: str, stage: str) -> pd.DataFrame | None:
    if table is None:
        return None
    return table.assign(campaign=pd.array([study] * len(table), dtype="string"), stage=stage)


def load_stage(parameters: dict, stage: str) -> pd.DataFrame | None:
    """What ``stage`` measured in this study (every device count of it), or None when it has not run."""
    folder = study_dir(parameters) / stage
    tables = [results.load(p) for p in campaign_folder.tables_under(folder)]
    if not tables:
        return None
    return _labelled(pd.concat(tables, ignore_index=True), parameters.get("CAMPAIGN", "study"), stage)


def study_baseline(parameters: dict, baseline_bs: int, rws: Sequence[str]) -> tuple[pd.DataFrame | None, str]:
    """The baseline ``01_baseline`` measured for ``rws`` at ``baseline_bs``, and a sentence saying where it comes
    from; (None, why) when that stage has not run or lacks one of them."""
    table = load_stage(parameters, BASELINE_STAGE)
    where = study_dir(parameters) / BASELINE_STAGE
    if table is None:
        return None, f"No baseline from {BASELINE_STAGE}: nothing measured in {where}."
    table = table[table["rw"].isin(list(rws))]
    try:
        base = analysis.baseline(table, baseline_bs) if not table.empty else None
    except analysis.AnalysisError as exc:
        return None, f"No usable baseline in {where}: {exc}."
    if base is None or set(rws) - set(base["rw"]):
        return None, f"{BASELINE_STAGE} in {where} measured no single-device {', '.join(rws)} at {baseline_bs} B."
    return base, f"Baseline taken from {BASELINE_STAGE} ({where}), as that notebook chose it."


def baseline_or_own(parameters: dict, table: pd.DataFrame, baseline_bs: int) -> tuple[pd.DataFrame, str]:
    """The study's baseline when ``01_baseline`` has one; else this stage's own single-device rows."""
    rws = sorted(set(table["rw"]))
    base, source = study_baseline(parameters, baseline_bs, rws)
    if base is not None:
        return base, source
    own = analysis.baseline(table, baseline_bs)
    return own, source + " This notebook's own single-device rows are used instead."


def unsupported_plans(support_table: pd.DataFrame, parameters: dict) -> str:
    """``can_build.plans`` of the layouts this machine cannot build, on as many example devices as the notebook's
    parameters ask for and with their layout options. The spec is never run: it takes the campaign's parameters
    only, so the notebook's own (its ``REFERENCE``...) are not held against its one layout."""
    campaign_only = {k: v for k, v in parameters.items()  # REFERENCE sets a field, but names no layout of "single"
                     if (k in schema.PARAMETERS or k == "CAMPAIGN") and k != "REFERENCE"}
    spec = stage_spec("plans", campaign_only, LAYOUTS=["single"])
    return can_build.plans(support_table, spec.use_devices or spec.array.devices, spec.options)


def numa_nodes(system: System | None = None) -> list[int]:
    """The NUMA nodes this machine has online (``[0]`` on a machine without NUMA)."""
    return (system or System()).numa_nodes()


def run_per_numa_node(stage: str, parameters: dict, nodes: Sequence[int], extra: Sequence[tuple[str, str]] = (),
                      progress: bool = False, **overrides) -> campaign.CampaignResult:
    """The stage once per NUMA node, fio's CPUs and memory bound to it (``numa_cpu_nodes``, ``numa_mem_policy``);
    the tables concatenated with a ``numa_node`` column (needs fio built with libnuma)."""
    runs = {f"node{node}": {"extra": (*extra, ("numa_cpu_nodes", str(node)), ("numa_mem_policy", f"bind:{node}")),
                            "columns": {"numa_node": node}} for node in nodes}
    return _run_each(stage, parameters, runs, progress, **overrides)
