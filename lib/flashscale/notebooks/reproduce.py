"""A published campaign run again and held against itself: ``flashscale reproduce DIR_OR_REPORT``.

    original = published("reports/quickstart")   the notebooks its report folder holds, each with the parameters
                                                  papermill gave it, and the campaigns they measured
    cannot_run(original, overrides, root)         why this machine cannot run them again, each difference named
    reproduce("reports/quickstart", overrides)    its notebooks and parameters (``-p`` on top) run as a new
                                                  campaign, then 08_compare on the two
    check(original, reproduction)                 the two campaigns' key numbers in agreement (08_compare calls it)

A reproduction is a campaign of its own, published beside the original::

    reports/<campaign>-reproduced/
        <campaign>-reproduced.yaml   the campaign file it ran: the original's notebooks, each with its parameters
        <notebook>.ipynb, .html      its reports, as ``flashscale run`` publishes them
        reproduction.ipynb, .html    08_compare on the two: every key number reproduced, differing beyond the noise
                                     by X%, undecided, or not comparable (why), and the verdict in one sentence
        index.html

Nothing runs when the machine cannot run the original's notebooks as they ran: a notebook missing from this
checkout, a backend this machine does not have (loop devices, the VM lab, a test bed file), or a test bed whose
devices a reproduction would erase again without the user's own ``-p CONFIRM=...``. The comparison itself is
``analysis.compare`` (one code path with 08_compare's).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import yaml

from . import execute
from ..campaigns import parameters as schema
from ..campaigns.campaign import place_here
from ..analysis import compare
from ..analysis.baseline_and_tax import BASELINE_BS
from ..analysis.significance import DEFAULT_MARGIN
from ..errors import ConfigError, FlashscaleError
from ..measure import campaign_folder, results
from ..measure.resume import differences
from ..paths import project_root
from ..publish.report import export_html, write_index
from ..system.commands import Runner

COMPARISON = "reproduction"     # the comparison's report in the reproduction's folder: reproduction.ipynb, .html
COMPARE_NOTEBOOK = "08_compare"
SUFFIX = "-reproduced"
RUN_ONLY = ("CAMPAIGN", "RESUME", "FORCE_RESUME")  # given by flashscale run to each run, not the campaign's own
NOT_COMPARED = ("name", "data_dir")  # of two campaign.json specs: a reproduction's own by design


@dataclass(frozen=True)
class Published:
    """A campaign as its report folder shows it."""
    campaign: str
    folder: Path                   # reports/<campaign>
    notebooks: dict[str, dict]     # notebook name -> the parameters papermill gave it (``RUN_ONLY`` left out)
    data: tuple[Path, ...]         # the campaign folders its notebooks measured into (<DATA_DIR>/<campaign>)

    def runs(self) -> list[Path]:
        """The campaign.json of every campaign its notebooks measured."""
        return [path for folder in self.data for path in campaign_folder.campaign_jsons(folder)]


def published(path: str | Path) -> Published:
    """The campaign published at ``path``: its report folder (reports/<campaign>) or one of its reports, or its data
    folder (data/campaigns/<campaign>, or a folder in it), whose report is then found (``_report_of``); ConfigError
    naming what is missing when ``path`` is neither, or no report measured into the data folder."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{str(path)!r} does not exist: give a campaign's report folder (reports/<campaign>), one "
                          "of its reports, or its data folder (data/campaigns/<campaign>)")
    folder = (path if path.is_dir() else path.parent).resolve()  # 08_compare reads it from the checkout
    if not _executed(folder) and campaign_folder.campaign_jsons(folder):
        folder = _report_of(folder)
    return _from_report(folder)


def _from_report(folder: Path) -> Published:
    """The campaign whose report folder is ``folder``: its executed notebooks, with the parameters papermill gave
    them, and the folders they measured into (``<DATA_DIR>/<campaign>``)."""
    executed = _executed(folder)
    if not executed:
        raise ConfigError(f"{str(folder)!r} holds no executed notebook and no campaign.json: give a campaign's report "
                          "folder (reports/<campaign>, as flashscale run wrote it) or its data folder "
                          "(data/campaigns/<campaign>)")
    notebooks = {}
    for notebook in executed:
        given = json.loads(notebook.read_text()).get("metadata", {}).get("papermill", {}).get("parameters")
        if given is None:
            raise ConfigError(f"{notebook} holds no parameters of papermill's: it was not executed by flashscale run")
        notebooks[notebook.stem] = {k: v for k, v in given.items() if k not in RUN_ONLY}
    campaign = folder.name
    data = {campaign_folder.data_root(given.get("DATA_DIR", "data/campaigns")) / campaign for given in notebooks.values()}
    return Published(campaign, folder, notebooks, tuple(sorted(data)))


def _report_of(data: Path) -> Path:
    """The report folder of the campaign whose data folder is ``data`` or holds it (a study's stage): the first
    ``reports/<campaign>``, in this checkout or in a folder above the data, whose executed notebooks measured into
    that campaign's folder (their ``DATA_DIR`` and the campaign's name say where)."""
    for campaign in (data, *data.parents):
        for above in dict.fromkeys((project_root(), *campaign.parents)):
            report = above / "reports" / campaign.name
            if campaign.name and report != data and _executed(report) and campaign in _measured_into(report):
                return report
    expected = project_root(data) / "reports" / data.name
    raise ConfigError(f"{str(data)!r} holds measurements (campaign.json) but no report of them was found: "
                      f"{str(expected)!r} holds no executed notebook that measured into it. A reproduction runs a "
                      "report's notebooks again with the parameters they ran with: give the report folder flashscale "
                      "run wrote (where its --reports said), or publish the campaign with flashscale run first")


def _measured_into(report: Path) -> list[Path]:
    """The folders the notebooks of the report folder ``report`` measured into; none when it is not one."""
    try:
        return [folder.resolve() for folder in _from_report(report).data]
    except (ConfigError, OSError, ValueError):
        return []


def _executed(folder: Path) -> list[Path]:
    """The notebooks ``flashscale run`` executed into ``folder``, in its order (its progress.json), without the
    comparison of a reproduction."""
    try:
        done = json.loads((folder / execute.PROGRESS_FILE).read_text())["done"]
    except (OSError, ValueError, KeyError, TypeError):
        done = sorted(p.name for p in folder.glob("*.ipynb"))
    return [folder / name for name in done if (folder / name).is_file() and Path(name).stem != COMPARISON]


def cannot_run(original: Published, overrides: dict, root: Path) -> list[str]:
    """Why this machine cannot run ``original``'s notebooks again as they ran (with ``overrides``), one sentence
    each: a notebook not in this checkout, no measurements to compare with, a backend other than the original's or
    one this machine lacks, a test bed's devices erased again without the user's own confirmation."""
    import papermill

    measured = sorted({campaign_folder.campaign_facts(path)["backend"] for path in original.runs()})
    problems = [] if measured else [f"{', '.join(map(str, original.data))} holds no campaign.json: the original's "
                                    "measurements are not on this machine to compare with"]
    for name, given in original.notebooks.items():
        notebook = root / "notebooks" / f"{name}.ipynb"
        if not notebook.is_file():
            problems.append(f"notebook {name} is not in this checkout ({notebook})")
            continue
        declared = papermill.inspect_notebook(str(notebook))
        if "EMULATION" in declared and measured:
            values = {**execute.declared_values(declared), **given, **overrides}
            problems += _backend_problems(name, values, measured, "CONFIRM" in overrides)
    return problems


def _backend_problems(name: str, values: dict, measured: list[str], confirmed: bool) -> list[str]:
    """What keeps notebook ``name`` with ``values`` from measuring here at the place the original measured at: the
    place these values pick here (``campaigns.campaign.place_here``) is asked what it lacks."""
    place = place_here(values.get("EMULATION", "auto"), values.get("TESTBED"), Runner())
    if not place.same_as(measured):
        why = f" ({place.fallback})" if place.fallback else ""
        return [f"{name}: the original measured on {' and '.join(measured)}, here it would measure on "
                f"{place.backend}{why}"]
    problem = place.reproduction_problem(values.get("DRY_RUN", True), confirmed)
    return [f"{name}: {problem}"] if problem else []


def _check_overrides(original: Published, overrides: dict, root: Path) -> None:
    """Refuse an override that no notebook of the campaign declares, naming it."""
    import papermill

    declared = {name for notebook in original.notebooks
                for name in papermill.inspect_notebook(str(execute.notebook_path(notebook, root)))}
    unknown = sorted(set(overrides) - declared)
    if unknown:
        raise ConfigError(f"no notebook of {original.campaign} ({', '.join(original.notebooks)}) has a parameter "
                          f"{unknown[0]!r}{execute.closest(unknown[0], declared)}")


def campaign_of(original: Published, overrides: dict, root: Path) -> dict:
    """The reproduction's campaign file: the original's notebooks in its order, each with the parameters it ran with
    and the ``overrides`` it declares; checked as ``flashscale run`` checks a campaign before it runs."""
    import papermill

    name = f"{original.campaign}{SUFFIX}"
    schema.check_campaign_name(name)
    per_notebook = {}
    for notebook, given in original.notebooks.items():
        declared = papermill.inspect_notebook(str(execute.notebook_path(notebook, root)))
        per_notebook[notebook] = {**given, **{k: v for k, v in overrides.items() if k in declared}}
    changed = f", with {', '.join(f'{k}={v!r}' for k, v in overrides.items())}" if overrides else ""
    spec = {"campaign": name, "description": f"{original.campaign} run again: the same notebooks and parameters"
                                             f"{changed}, compared with the original in {COMPARISON}.html",
            "notebooks": list(original.notebooks), "parameters": {}, "notebook_parameters": per_notebook}
    execute.notebook_parameters(spec, root)  # refused here, naming the value, before anything is written
    return spec


def reproduce(path: str | Path, overrides: dict | None = None, reports_dir: str | Path | None = None) -> list[Path]:
    """Run the campaign published at ``path`` again as ``<campaign>-reproduced`` (its reports beside the original's
    unless ``reports_dir``), then publish 08_compare on the two as ``reproduction.html`` there; return the HTML
    reports written, the comparison last. ConfigError, before anything runs, when this machine cannot run it."""
    overrides = dict(overrides or {})
    original = published(path)
    root = project_root()
    problems = cannot_run(original, overrides, root)
    if problems:
        raise ConfigError(f"cannot reproduce {original.campaign} on this machine: " + "; ".join(problems)
                          + ". Nothing was run.")
    _check_overrides(original, overrides, root)
    spec = campaign_of(original, overrides, root)
    out = Path(reports_dir) if reports_dir else original.folder.parent
    folder = out / spec["campaign"]
    folder.mkdir(parents=True, exist_ok=True)
    campaign_file = folder / f"{spec['campaign']}.yaml"
    campaign_file.write_text(yaml.safe_dump(spec, sort_keys=False))
    reports = execute.run_campaign(campaign_file, reports_dir=out)
    return [*reports, _publish_comparison(original, published(folder), spec, root)]


def _publish_comparison(original: Published, again: Published, spec: dict, root: Path) -> Path:
    """08_compare on the original and its reproduction, executed into the reproduction's folder as
    ``reproduction.ipynb`` and published; the folder's index rewritten with it."""
    import papermill

    executed = again.folder / f"{COMPARISON}.ipynb"
    given = {"CAMPAIGN": again.campaign, "SOURCES": [str(p) for p in (*original.data, *again.data)],
             "ORIGINAL": str(original.folder), "REPRODUCTION": str(again.folder)}
    try:
        execute.execute_notebook(execute.notebook_path(COMPARE_NOTEBOOK, root), executed, given, root,
                                 progress_bar=False)
    except papermill.PapermillExecutionError as exc:
        raise FlashscaleError(f"{COMPARE_NOTEBOOK} stopped with {exc.ename}: {exc.evalue} (the executed notebook "
                              f"is {executed})") from None
    html = export_html(executed, executed.with_suffix(".html"))
    started = json.loads((again.folder / execute.PROGRESS_FILE).read_text())["started"]
    ran = {execute.notebook_path(n, root): p for n, p in spec["notebook_parameters"].items()}
    write_index(again.folder, again.campaign, spec["description"], execute.campaign_runs(again.campaign, ran, started),
                datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return html


@dataclass(frozen=True)
class Check:
    """Two campaigns' key numbers side by side (``compare.agreement``), its verdict in one sentence, the margin it
    was read against, and how the reproduction ran differently (parameters, machine), one sentence each."""
    agreed: pd.DataFrame
    verdict: str
    margin: float
    changed: list[str]

    def shown(self, unit: str) -> pd.DataFrame:
        """The key numbers in ``unit`` (bytes/s, fraction) as a report's table shows them: which number, both values
        with their intervals, the agreement in words (the source only where the campaigns have several tables)."""
        rows = self.agreed[self.agreed["unit"] == unit].rename(columns={"number": "key_number"})
        where = ["source"] if self.agreed["source"].astype(bool).any() else []
        return rows[[*where, "layout", "devices", "rw", "key_number", "original", "original_lo", "original_hi",
                     "reproduction", "reproduction_lo", "reproduction_hi", "agreement"]]


def check(original: str | Path, reproduction: str | Path) -> Check:
    """The key numbers of the campaign published at ``original`` and of its reproduction's, in agreement by the one
    rule (``analysis.agreement``: the ratio's interval within the original's ``TAX_MARGIN``, as the tax's verdict
    and a prediction's), each table matched by its place in its campaign's folder."""
    first, again = published(original), published(reproduction)
    settings = _settings(first)
    keys = [_key_numbers(side, settings) for side in (first, again)]
    agreed = compare.agreement(*keys, settings["TAX_MARGIN"])
    return Check(agreed, compare.verdict(agreed), settings["TAX_MARGIN"], _changed(first, again))


def _settings(original: Published) -> dict:
    """``REFERENCE``, ``BASELINE_BS`` and ``TAX_MARGIN`` as the original's notebooks ran with them (given, else
    their parameters cell's), falling back on the analysis's defaults."""
    import papermill

    found = {"REFERENCE": "jbod", "BASELINE_BS": BASELINE_BS, "TAX_MARGIN": DEFAULT_MARGIN}
    root = project_root()
    for name, given in reversed(original.notebooks.items()):  # the first notebook's values win
        notebook = root / "notebooks" / f"{name}.ipynb"
        declared = execute.declared_values(papermill.inspect_notebook(str(notebook))) if notebook.is_file() else {}
        found.update({k: v for k, v in {**declared, **given}.items() if k in found})
    return found


def _key_numbers(side: Published, settings: dict) -> pd.DataFrame:
    """``compare.key_numbers`` of every results table of the campaign, each named by its folder below the
    campaign's (blank for the campaign's own table)."""
    found = []
    for folder in side.data:
        for table in campaign_folder.tables_under(folder) if folder.is_dir() else []:
            keys = compare.key_numbers(results.load(table), settings["REFERENCE"], settings["BASELINE_BS"],
                                       settings["TAX_MARGIN"])
            place = table.parent.relative_to(folder).as_posix()
            found.append(keys.assign(source="" if place == "." else place))
    return pd.concat(found, ignore_index=True) if found else compare.key_numbers(pd.DataFrame(), "")


def _changed(original: Published, again: Published) -> list[str]:
    """How the reproduction ran differently from the original: each campaign's spec and machine facts
    (``resume.differences``, its own name and data folder aside), matched by place in the campaign's folder."""
    def by_place(side: Published) -> dict[str, dict]:
        return {path.parent.relative_to(folder).as_posix(): json.loads(path.read_text())
                for folder in side.data for path in campaign_folder.campaign_jsons(folder)}

    before, after = by_place(original), by_place(again)
    said = []
    for place in sorted(set(before) | set(after)):
        where = "" if place == "." else f"{place}: "
        if place not in before or place not in after:
            said.append(f"{where}measured only by the {'reproduction' if place in after else 'original'}")
            continue
        now = after[place]
        found = differences(before[place], now.get("spec", {}), now.get("environment", {}))
        said += [f"{where}{line}" for line in found if line.split(".")[0].split(":")[0] not in NOT_COMPARED]
    return said
