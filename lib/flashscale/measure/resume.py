"""An interrupted campaign, resumed in its own folder: what it finished, what changed since, what it left unfinished.

A campaign's folder holds ``campaign.json`` (its spec and the machine it ran on), ``rows.jsonl`` (one line per
finished run) and ``progress.json`` (the layouts whose sweep ran to the end). Resuming keeps every finished run
exactly once and runs only the others: ``finished`` says which; ``clear_unfinished`` removes the raw folders of the
runs that were cut short (a job file and no ``env.json``: no row), so they run again; ``differences`` names what
changed in the campaign or on the machine that would mix numbers that cannot be compared. ``open_campaign`` does
all of it for ``campaign.run``.
"""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ConfigError
from ..system import provenance

from . import results
from .raw import CAMPAIGN_JSON

SET_ASIDE = "rows.set-aside.jsonl"  # rows of failed runs and of workloads measured again on resume
PROGRESS_JSON = "progress.json"
# What may change between an interrupted run and its resume without changing what the numbers mean.
NOT_COMPARED = {"resume", "force_resume", "on_failure"}
# The machine's facts that must not change under a resumed campaign. Its software (``environment.software``) may:
# a resume after a package upgrade is allowed, said in the notes and kept in campaign.json's ``resumed`` entry.
COMPARED_ENVIRONMENT = ("hostname", "kernel", "fio", "backend", "devices")
EMPTY = ([], {}, None)  # a spec field's value that means "none": the same as not recorded at all


def state(folder: Path) -> dict | None:
    """The ``campaign.json`` of a campaign folder; None when there is none to resume."""
    path = Path(folder) / CAMPAIGN_JSON
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def plain(value) -> object:
    """``value`` as campaign.json stores it (tuples as lists, paths and the rest as strings)."""
    return json.loads(json.dumps(value, default=str))


def _flat(value, prefix: str = "") -> dict:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def differences(before: dict, spec: dict, environment: dict) -> list[str]:
    """What differs between the interrupted run (its campaign.json) and this one: spec fields (``NOT_COMPARED``
    aside) and the machine's facts (``COMPARED_ENVIRONMENT``), each named with both values. A field the interrupted
    run did not record (a campaign.json written before it existed) differs only when it is not empty now: an empty
    one (``CAP_SCALE`` []: every device at the cap) is what that run did."""
    old, new = _flat(before.get("spec", {})), _flat(plain(spec))
    keys = sorted(k for k in set(old) | set(new) if k.split(".")[0] not in NOT_COMPARED
                  and not (k not in old and new.get(k) in EMPTY))
    found = [f"{k}: {old.get(k)!r} then, {new.get(k)!r} now" for k in keys if old.get(k) != new.get(k)]
    was, now = before.get("environment", {}), plain(environment)
    found += [f"{k}: {was.get(k)!r} then, {now.get(k)!r} now" for k in COMPARED_ENVIRONMENT if was.get(k) != now.get(k)]
    return found


def _software_changed(before: dict, environment: dict) -> str | None:
    """A sentence naming the software that changed since the interrupted run (``provenance.differences``), if any."""
    then, now = before.get("environment", {}).get("software"), plain(environment).get("software")
    changed = provenance.differences(then, now) if then and now else []
    return f"Resumed with other software than measured before: {'; '.join(changed)}." if changed else None


def finished(folder: Path) -> tuple[frozenset, frozenset]:
    """The runs the campaign finished, as (layout, point, rep) of its measured rows, and the layouts whose sweep ran
    to the end. (``set_aside_failed`` has moved the failed runs out of the rows first: they run again.)"""
    rows, _ = results.read_rows(folder)
    runs = frozenset((r.get("layout"), r.get("point"), r.get("rep")) for r in rows
                     if r.get("phase", "measure") == "measure")
    return runs, frozenset(progress(folder).get("layouts_done", []))


def progress(folder: Path) -> dict:
    try:
        return json.loads((Path(folder) / PROGRESS_JSON).read_text())
    except (OSError, ValueError):
        return {}


def mark_layout_done(folder: Path, layout: str) -> None:
    """Record that ``layout``'s sweep (its points and workloads) ran to the end."""
    known = progress(folder)
    known["layouts_done"] = sorted({*known.get("layouts_done", []), layout})
    results.write_atomically(Path(folder) / PROGRESS_JSON, json.dumps(known, indent=1))


def clear_unfinished(folder: Path) -> list[str]:
    """Remove the raw folders of runs cut short (a ``job.fio`` and no ``env.json``, which is written with the row),
    so they run again; returns them, relative to the campaign folder."""
    raw = Path(folder) / "raw"
    cut = sorted({job.parent for job in raw.rglob("job.fio")} if raw.is_dir() else set())
    cut = [run for run in cut if not (run / "env.json").exists()]
    for run in cut:
        shutil.rmtree(run)
    return [str(run.relative_to(folder)) for run in cut]


def set_aside_failed(folder: Path) -> str | None:
    """The sweep's failed runs (``status`` failed: fio's error, a full disk) are measured again on resume: their
    rows move to ``rows.set-aside.jsonl``, their raw folders gain ``.set-aside`` and their layouts are no longer
    done, so each failed (layout, point, rep) runs once more and nothing measured is lost. Returns what it said."""
    rows, _ = results.read_rows(folder)
    failed = [r for r in rows if r.get("phase", "measure") == "measure" and r.get("status") == "failed"
              and r.get("workload", "fio") == "fio"]
    if not failed:
        return None
    _set_aside(folder, rows, failed)
    layouts = sorted({str(r.get("layout")) for r in failed})
    known = progress(folder)
    known["layouts_done"] = sorted(set(known.get("layouts_done", [])) - set(layouts))
    results.write_atomically(Path(folder) / PROGRESS_JSON, json.dumps(known, indent=1))
    return (f"{len(failed)} failed run(s) on {', '.join(layouts)} were set aside in {SET_ASIDE} and measured "
            "again")


def _set_aside(folder: Path, rows: list[dict], aside: list[dict]) -> None:
    """Move ``aside`` (some of ``rows``) to ``SET_ASIDE`` and rename their raw folders ``<name>.set-aside``."""
    kept = [r for r in rows if r not in aside]
    with open(Path(folder) / SET_ASIDE, "a") as out:
        out.writelines(json.dumps(r, default=str) + "\n" for r in aside)
    results.rewrite_rows(folder, kept)
    for raw in sorted({r["raw_dir"] for r in aside if r.get("raw_dir")}):
        run = Path(folder) / raw
        if run.is_dir():
            run.rename(run.with_name(fresh_name(run.parent, f"{run.name}.set-aside")))


def set_aside_workloads(folder: Path, layouts_done: frozenset) -> str | None:
    """Workloads (job files, applications) run again, whole, on a layout whose sweep was cut short: their rows from
    the interrupted run move to ``rows.set-aside.jsonl`` and their raw folders gain ``.set-aside``, so each
    (layout, point, rep) is in the table once and nothing measured is lost. Returns what it said, or None."""
    rows, _ = results.read_rows(folder)
    aside = [r for r in rows if r.get("phase") == "workload" and r.get("layout") not in layouts_done]
    if not aside:
        return None
    _set_aside(folder, rows, aside)
    return (f"{len(aside)} workload row(s) of layouts cut short were set aside in {SET_ASIDE} (their workloads "
            "ran again, whole)")


def fresh_name(folder: Path, name: str) -> str:
    """``name``, or ``name-2``, ``name-3``... : the first not yet used under ``folder`` (a resumed layout's new
    precondition beside the one of the interrupted run)."""
    taken = Path(folder)
    candidates = [name] + [f"{name}-{n}" for n in range(2, 1000)]
    return next(c for c in candidates if not (taken / c).exists())


def open_campaign(folder: Path, spec: dict, env: dict, notes: list[str], resuming: bool,
                  force: bool) -> tuple[Path, str, frozenset, frozenset]:
    """The campaign's folder, its run id, and the runs and layouts it finished already: a fresh folder (an earlier
    one kept, renamed with its date), or when ``resuming`` the interrupted campaign's own, checked unchanged
    (``force``: resumed anyway, said in ``notes``). ``spec`` is the campaign's spec as a dict."""
    before = state(folder)
    if not resuming or before is None:
        if resuming:
            notes.append(f"RESUME was asked but {folder} holds no campaign to resume: it started afresh.")
        elif before is not None and not (folder / "notes.json").exists():
            notes.append(f"The earlier run in {folder} did not finish; it was kept, renamed with its date "
                         "(RESUME=True would have continued it).")
        directory = results.fresh_directory(folder)
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        (directory / CAMPAIGN_JSON).write_text(json.dumps(
            {"run_id": run_id, "spec": spec, "environment": env, "notes": notes}, indent=1, default=str))
        return directory, run_id, frozenset(), frozenset()
    changed = differences(before, spec, env)
    if changed and not force:
        raise ConfigError(f"cannot resume {folder}: " + "; ".join(changed) + ". Its numbers would not compare with "
                          "new ones; run afresh, or FORCE_RESUME=True (--force-resume) to resume anyway")
    if changed:
        notes.append("Resumed although the campaign or the machine changed (FORCE_RESUME): " + "; ".join(changed)
                     + ". Rows measured before and after may not compare.")
    torn = results.drop_torn_line(folder)
    cut = clear_unfinished(folder)
    failed = set_aside_failed(folder)
    done, layouts_done = finished(folder)
    aside = set_aside_workloads(folder, layouts_done)
    notes += [line for line in (torn, failed, aside, _software_changed(before, env)) if line]
    notes.append(f"Resumed the interrupted campaign in {folder}: {len(done)} finished run(s) kept and not run "
                 f"again" + (f"; run again: {', '.join(cut)}" if cut else "") + ".")
    (folder / "notes.json").unlink(missing_ok=True)
    resumed = [*before.get("resumed", []), {"at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                            "environment": env, "changed": changed}]
    (folder / CAMPAIGN_JSON).write_text(json.dumps({**before, "resumed": resumed}, indent=1, default=str))
    return folder, before["run_id"], done, layouts_done
