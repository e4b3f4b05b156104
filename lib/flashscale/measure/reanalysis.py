"""A finished campaign read back instead of measured: ``flashscale run CAMPAIGN --reanalyze``.

``execute.run_campaign(reanalyze=True)`` starts each notebook's kernel with ``FLASHSCALE_REANALYZE=1``; every
measuring entry point (``campaign.run``, ``cluster.run``) then asks ``stored`` for the campaign it would have
measured and returns that instead: no device is made, erased or touched, no fio runs, nothing is written in the
campaign's folder. The notebook goes on to analyse and publish as it does after measuring, so its tables come
from the same code on the same rows.

``stored`` refuses, naming why, a campaign that is not there, that did not finish (``--resume`` measures the rest),
or whose stored spec differs from the one asked for (the stored runs would answer another question). Parameters
that change only the analysis (``REFERENCE``, ``TAX_MARGIN``, ``BASELINE_BS``...) are not part of the spec, so a
campaign can be re-analysed with another margin.
"""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ConfigError
from . import campaign_folder, results, resume
from .campaign_folder import CAMPAIGN_JSON, NOTES_JSON  # written when a campaign starts, and when it finishes

ENVIRONMENT = "FLASHSCALE_REANALYZE"


def active() -> bool:
    """Whether this process re-analyses stored campaigns instead of measuring (``FLASHSCALE_REANALYZE=1``)."""
    return os.environ.get(ENVIRONMENT, "") not in ("", "0")


def stored(folder: str | Path, spec: dict) -> tuple:
    """The finished campaign in ``folder`` measured for ``spec`` (its ``asdict``): (its table, its folder, its
    backend, its notes with one saying it was re-analysed). ConfigError when there is none, it did not finish, or
    it was measured for another spec."""
    folder = Path(folder)
    before = campaign_folder.read_campaign(folder)
    if before is None:
        raise ConfigError(f"--reanalyze: {folder} holds no campaign ({CAMPAIGN_JSON}) to re-analyse; nothing was "
                          "measured. Run the campaign first")
    changed = resume.differences(before, spec, before.get("environment", {}))
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
