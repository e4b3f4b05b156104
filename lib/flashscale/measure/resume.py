"""A campaign read back from its own folder: resumed where it was interrupted (``--resume``), or re-analysed without
measuring anything (``--reanalyze``).

Resumed: what it finished, what changed since, what it left unfinished.

A campaign's folder (``measure.campaign_folder``) holds ``campaign.json`` (its spec and the machine it ran on),
``rows.jsonl`` (one line per finished run) and ``progress.json`` (the layouts whose sweep ran to the end). Resuming
keeps every finished run exactly once and runs only the others: ``finished`` says which; a run that finished but
was killed before its row reached ``rows.jsonl`` gets its row back from its ``env.json`` (``recover_rows``); the raw
folders of the runs that were cut short (a job file, or nothing, and no ``env.json``: no row) are removed, so they
run again; ``differences`` names what changed in the campaign or on the machine that would mix numbers that cannot
be compared. ``open_campaign`` does all of it for ``campaign.run``.

Re-analysed: ``execute.run_campaign(reanalyze=True)`` starts each notebook's kernel with ``FLASHSCALE_REANALYZE=1``
(``REANALYZE``); the one measuring loop (``campaign.run_at``: a campaign's, a cluster's) then asks ``stored_campaign`` for
the campaign it would have measured and returns that instead: no device is made, erased or touched, no fio runs,
nothing is written in the campaign's folder. The notebook goes on to analyse and publish as it does after
measuring, so its tables come from the same code on the same rows. ``stored_campaign`` refuses, naming why, a
campaign that is not there, that did not finish (``--resume`` measures the rest), or whose stored spec differs from
the one asked for (the stored runs would answer another question). Parameters that change only the analysis
(``REFERENCE``, ``TAX_MARGIN``, ``BASELINE_BS``...) are not compared (``NOT_COMPARED``, where a spec holds them for
the sequential tax test), so a campaign can be re-analysed with another margin or reference.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ConfigError
from ..system import provenance

from . import campaign_folder, results
from .results import SWEPT
from .campaign_folder import CAMPAIGN_JSON, NOTES_JSON  # written when a campaign starts, and when it finishes

# What may change between an interrupted run and its resume without changing what the numbers mean.
# tax_margin (TAX_MARGIN) is the analysis's: a stored campaign is read again at another margin; with PRECISION it
# also told the sequential test when a point had run enough, which each row's reps_reason keeps.
# reference (REFERENCE) likewise: a stored campaign is read again against another of its layouts.
NOT_COMPARED = {"resume", "force_resume", "on_failure", "tax_margin", "reference", "archive",  # kept where: not what
                "sweep.start_ahead"}  # how, not what: fio started ahead runs the same job (measure.ahead)
# The machine's facts that must not change under a resumed campaign. Its software (``environment.software``) may:
# a resume after a package upgrade is allowed, said in the notes and kept in campaign.json's ``resumed`` entry.
COMPARED_ENVIRONMENT = ("hostname", "kernel", "fio", "backend", "devices")
REANALYZE = "FLASHSCALE_REANALYZE"  # set (1) while flashscale run --reanalyze starts its notebooks' kernels
EMPTY = ([], {}, None)  # a spec field's value that means "none": the same as not recorded at all


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
    keys = sorted(k for k in set(old) | set(new) if not {k, k.split(".")[0]} & NOT_COMPARED
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


def run_key(layout: str, point: str, rep: int, hosts: int | None = None) -> tuple:
    """What names one run of a sweep: (layout, point, rep), and its host count where it has one (a cluster's)."""
    return (layout, point, rep) if hosts is None else (layout, point, rep, hosts)


def _key(row: dict) -> tuple:
    return run_key(row.get("layout"), row.get("point"), row.get("rep"), row.get("hosts"))


def finished(folder: Path) -> tuple[frozenset, frozenset]:
    """The runs the campaign finished, as the ``run_key`` of its measured rows, and the layouts whose sweep ran to
    the end. (``set_aside_failed`` has moved the failed runs out of the rows first: they run again.)"""
    rows, _ = campaign_folder.read_rows(folder)
    runs = frozenset(_key(r) for r in rows if r.get("phase", "measure") in SWEPT)
    return runs, frozenset(campaign_folder.layouts_done(folder))


def set_aside_failed(folder: Path) -> str | None:
    """The sweep's failed runs (``status`` failed: fio's error, a full disk) are measured again on resume: their
    rows move to ``rows.set-aside.jsonl``, their raw folders gain ``.set-aside`` and their layouts are no longer
    done, so each failed (layout, point, rep) runs once more and nothing measured is lost. Returns what it said."""
    rows, _ = campaign_folder.read_rows(folder)
    runs = {_key(r) for r in rows if r.get("phase", "measure") in SWEPT and r.get("status") == "failed"
            and r.get("workload", "fio") == "fio"}  # a cluster's run: every host's row with the cluster's
    failed = [r for r in rows if r.get("phase", "measure") in SWEPT and r.get("workload", "fio") == "fio"
              and _key(r) in runs]
    if not failed:
        return None
    campaign_folder.set_aside(folder, [r for r in rows if r not in failed], failed)
    layouts = sorted({str(r.get("layout")) for r in failed})
    for again in sorted({results.bracket_name(str(r.get("layout"))) if r.get("phase") == results.BRACKET_PHASE
                         else str(r.get("layout")) for r in failed}):  # a bracket's failed run: the bracket again
        campaign_folder.mark_layout_done(folder, again, done=False)
    return (f"{len(runs)} failed run(s) on {', '.join(layouts)} were set aside in {campaign_folder.SET_ASIDE_FILE} and "
            "measured again")


def set_aside_workloads(folder: Path, layouts_done: frozenset) -> str | None:
    """Workloads (job files, applications) run again, whole, on a layout whose sweep was cut short: their rows from
    the interrupted run move to ``rows.set-aside.jsonl`` and their raw folders gain ``.set-aside``, so each
    (layout, point, rep) is in the table once and nothing measured is lost. Returns what it said, or None."""
    rows, _ = campaign_folder.read_rows(folder)
    aside = [r for r in rows if r.get("phase") == "workload" and r.get("layout") not in layouts_done]
    if not aside:
        return None
    campaign_folder.set_aside(folder, [r for r in rows if r not in aside], aside)
    return (f"{len(aside)} workload row(s) of layouts cut short were set aside in {campaign_folder.SET_ASIDE_FILE} (their "
            "workloads ran again, whole)")


def open_campaign(folder: Path, spec: dict, env: dict, notes: list[str], resuming: bool,
                  force: bool) -> tuple[Path, str, frozenset, frozenset]:
    """The campaign's folder, its run id, and the runs and layouts it finished already: a fresh folder (an earlier
    one kept, renamed with its date), or when ``resuming`` the interrupted campaign's own, checked unchanged
    (``force``: resumed anyway, said in ``notes``). ``spec`` is the campaign's spec as a dict."""
    before = campaign_folder.read_campaign(folder)
    if not resuming or before is None:
        if resuming:
            notes.append(f"RESUME was asked but {folder} holds no campaign to resume: it started afresh.")
        elif before is not None and campaign_folder.read_notes(folder) is None:
            notes.append(f"The earlier run in {folder} did not finish; it was kept, renamed with its date "
                         "(RESUME=True would have continued it).")
        directory = campaign_folder.fresh_directory(folder)
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        campaign_folder.write_campaign(directory, run_id, spec, env, notes)
        return directory, run_id, frozenset(), frozenset()
    changed = differences(before, spec, env)
    if changed and not force:
        raise ConfigError(f"cannot resume {folder}: " + "; ".join(changed) + ". Its numbers would not compare with "
                          "new ones; run afresh, or FORCE_RESUME=True (--force-resume) to resume anyway")
    if changed:
        notes.append("Resumed although the campaign or the machine changed (FORCE_RESUME): " + "; ".join(changed)
                     + ". Rows measured before and after may not compare.")
    torn = campaign_folder.drop_torn_line(folder)
    recovered = campaign_folder.recover_rows(folder)
    cut = campaign_folder.clear_cut_short(folder)
    failed = set_aside_failed(folder)
    done, layouts_done = finished(folder)
    aside = set_aside_workloads(folder, layouts_done)
    notes += [line for line in (torn, recovered, failed, aside, _software_changed(before, env)) if line]
    notes.append(f"Resumed the interrupted campaign in {folder}: {len(done)} finished run(s) kept and not run "
                 f"again" + (f"; run again: {', '.join(cut)}" if cut else "") + ".")
    campaign_folder.forget_notes(folder)
    campaign_folder.add_resumed(folder, before, {"at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                       "environment": env, "changed": changed})
    return folder, before["run_id"], done, layouts_done


def reanalyzing() -> bool:
    """Whether this process re-analyses stored campaigns instead of measuring (``FLASHSCALE_REANALYZE=1``)."""
    return os.environ.get(REANALYZE, "") not in ("", "0")


def stored_campaign(folder: str | Path, spec: dict) -> tuple:
    """The finished campaign in ``folder`` measured for ``spec`` (its ``asdict``): (its table, its folder, its
    backend, its notes with one saying it was re-analysed). ConfigError when there is none, it did not finish, or
    it was measured for another spec."""
    folder = Path(folder)
    before = campaign_folder.read_campaign(folder)
    if before is None:
        raise ConfigError(f"--reanalyze: {folder} holds no campaign ({CAMPAIGN_JSON}) to re-analyse; nothing was "
                          "measured. Run the campaign first")
    changed = differences(before, spec, before.get("environment", {}))
    if changed:
        raise ConfigError(f"--reanalyze: the campaign stored in {folder} was measured for another spec: "
                          + "; ".join(changed) + ". Its runs do not answer this one; nothing was measured")
    notes = campaign_folder.read_notes(folder)
    if notes is None:
        raise ConfigError(f"--reanalyze: the campaign in {folder} did not finish (no {NOTES_JSON}); --resume "
                          "measures what is missing, --reanalyze measures nothing")
    rows, _ = campaign_folder.read_rows(folder)
    table = results.to_frame(rows)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes.append(f"Re-analysed at {when} from the {len(rows)} run(s) stored in {folder}: nothing was measured "
                 f"again (the campaign ran at {before.get('run_id', 'an unknown time')}).")
    return table, folder, str(before.get("environment", {}).get("backend", "")), notes
