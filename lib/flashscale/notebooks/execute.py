"""Campaign files executed: each notebook run by papermill with the campaign's parameters, then published.

A campaign file (YAML)::

    campaign: quickstart          # folder name under data/campaigns/ and reports/
    description: one line saying what it is for
    notebooks: [quickstart]       # notebooks/<name>.ipynb, executed in this order
    parameters:                   # given to every notebook; each must be declared in its parameters cell
      DEVICES: 4
    notebook_parameters:          # optional: more parameters for one notebook, over those above
      quickstart: {NUMJOBS: [1, 2]}

``flashscale run`` also writes ``index.html`` beside the reports: when, where and on what the campaign ran (from the
campaign.json its notebooks wrote), and a link to each executed notebook in the folder with the headline numbers
it recorded. Every parameter is checked against the notebook's ``parameters`` cell
before anything runs; ``CAMPAIGN`` (the campaign's name) goes to each notebook that declares it. papermill injects
the values as a cell tagged ``injected-parameters`` and records them in the executed notebook's metadata.

The whole file is checked before the first notebook runs: its keys (an unknown one named with the closest known
key), each notebook's declared parameters, each campaign parameter's type and range, and the rules each notebook's
report needs of its parameters, with the values its parameters cell gives for the others (``parameters.check``: a
``REFERENCE`` among the ``LAYOUTS``...). One ``flashscale run`` of a campaign at a time:
``reports/<campaign>/flashscale.lock`` names the run that holds it. ``progress.json`` there records each notebook
as it finishes; with ``resume`` the notebooks that finished are not executed again, and the others get ``RESUME``
(and ``FORCE_RESUME``), so each continues its own interrupted campaign; every measuring notebook declares them and
``ON_FAILURE`` (one that measures nothing has nothing to resume).

While a notebook runs, each fio run's start and end (``measure.progress``) reach the terminal (stderr) as it
happens: the kernel is started with ``FLASHSCALE_PROGRESS=lines``, papermill hands its stdout to ``TerminalEcho``,
which writes the progress lines and nothing else (papermill's own bar is off: one line, one ETA, which counts the
notebooks still to run); the report is exported without them. The kernel talks to papermill over Unix sockets, not TCP (``execute_notebook``, ``kernel.LocalKernelManager``).
"""
from __future__ import annotations

import ast
import contextlib
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
import logging
from pathlib import Path
from typing import Iterable

import yaml

from ..campaigns import campaign as campaigns, cluster as clusters, parameters as schema
from ..campaigns import dry_run
from ..campaigns.parameters import closest
from .. import errors
from . import estimate
from ..errors import ConfigError
from . import cost
from ..measure import campaign_folder, progress as live
from ..measure.resume import REANALYZE
from ..paths import project_root
from ..publish.report import export_html, write_index
from ..system import lock
from ..system.devices import System

log = logging.getLogger("flashscale.notebooks.execute")

CAMPAIGN_KEYS = {"campaign", "description", "notebooks", "parameters", "notebook_parameters"}
PROGRESS_FILE = "progress.json"


def load_campaign(path: str | Path) -> dict:
    """Read and check a campaign file; ConfigError names what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"campaign file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_bytes().decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: not a YAML file: {' '.join(str(exc).split())[:300]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a campaign file is a mapping with keys {sorted(CAMPAIGN_KEYS)}, not "
                          f"{type(data).__name__}")
    unknown = sorted(map(str, set(data) - CAMPAIGN_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}{closest(unknown[0], CAMPAIGN_KEYS)}; expected "
                          f"{sorted(CAMPAIGN_KEYS)}")
    name = data.get("campaign")
    try:
        schema.check_campaign_name(name)
    except ConfigError as exc:
        raise ConfigError(f"{path}: campaign: {exc}") from None
    notebooks = data.get("notebooks")
    if not isinstance(notebooks, list) or not notebooks or not all(isinstance(n, str) for n in notebooks):
        raise ConfigError(f"{path}: notebooks={notebooks!r} must be a non-empty list of notebook names")
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ConfigError(f"{path}: parameters={parameters!r} must be a mapping")
    per_notebook = data.get("notebook_parameters") or {}
    if not isinstance(per_notebook, dict) or not all(isinstance(v, dict) for v in per_notebook.values()):
        raise ConfigError(f"{path}: notebook_parameters={per_notebook!r} must map notebook names to mappings")
    strays = sorted(set(per_notebook) - set(notebooks))
    if strays:
        raise ConfigError(f"{path}: notebook_parameters names notebook(s) {strays} that are not in notebooks")
    for key, given in [("parameters", parameters), *((f"notebook_parameters.{n}", {**parameters, **v})
                                                      for n, v in per_notebook.items())]:
        if not all(isinstance(k, str) for k in given):
            raise ConfigError(f"{path}: {key} has a name that is not a string: {sorted(map(repr, given))}")
        for parts in (campaigns.PARTS, clusters.PARTS):  # each name by the spec that has it
            schema.check(given, parts, where=f"{path}: {key}")
    return {"campaign": name, "description": data.get("description", ""), "notebooks": notebooks,
            "parameters": parameters, "notebook_parameters": per_notebook}


def parse_overrides(items: Iterable[str]) -> dict:
    """``NAME=VALUE`` strings (VALUE read as YAML) to a dict; ConfigError names a malformed one."""
    overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ConfigError(f"parameter override {schema.shown(item)} must look like NAME=VALUE")
        try:
            overrides[name] = yaml.safe_load(value)
        except (yaml.YAMLError, RecursionError) as exc:
            raise ConfigError(f"parameter override {schema.shown(item)}: its value is not YAML: "
                              f"{' '.join(str(exc).split())[:200]}") from None
    return overrides


def notebook_path(name: str, root: Path) -> Path:
    """The notebook ``name`` of the checkout's notebooks/ folder; ConfigError naming it where it is a path (it
    must stay in notebooks/) or is not there."""
    try:
        schema.check_campaign_name(name, "notebook")
    except ConfigError as exc:
        raise ConfigError(f"{exc}: a notebook is named by its file's name in notebooks/") from None
    path = root / "notebooks" / (name if name.endswith(".ipynb") else f"{name}.ipynb")
    if not path.is_file():
        raise ConfigError(f"notebook {name!r} not found at {path}")
    return path


def check_parameters(notebook: Path, parameters: dict, declared: dict | None = None) -> None:
    """Refuse parameters the notebook does not declare (a typo would otherwise be silently ignored). ``declared``:
    the notebook's parameters cell as ``papermill.inspect_notebook`` reads it, when the caller has it already."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook)) if declared is None else declared
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ConfigError(f"{notebook.name} has no parameter {unknown[0]!r}{closest(unknown[0], declared)}"
                          f"{f' (nor {unknown[1:]})' if unknown[1:] else ''}; it declares {sorted(declared)}")


def declared_values(declared: dict) -> dict:
    """The values of a notebook's parameters cell (``papermill.inspect_notebook``'s ``default``, its source text)
    that are literals or arithmetic on numbers (``2 * 2**30``): what the notebook runs with where a campaign does
    not set them, so that the schema's rules see them. Any other expression is left out."""
    values = {}
    for name, info in declared.items():
        try:
            tree = ast.parse(str(info.get("default", "")), mode="eval")
        except SyntaxError:
            continue
        if all(isinstance(node, _LITERAL_NODES) for node in ast.walk(tree)):
            values[name] = eval(compile(tree, name, "eval"), {"__builtins__": {}})  # constants and operators only
    return values


# What a parameter's value may be made of to be read without running the notebook: constants, containers, operators.
_LITERAL_NODES = (ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.UnaryOp, ast.BinOp,
                  ast.operator, ast.unaryop, ast.Load)


def parts_of(declared: dict) -> dict:
    """The parts of the parameters a notebook's cell declares: a cluster's (it has ``HOSTS``) or a campaign's."""
    return clusters.PARTS if "HOSTS" in declared else campaigns.PARTS


def notebook_values(spec: dict, root: Path, overrides: dict | None = None) -> dict[Path, dict]:
    """Each notebook of the campaign ``spec`` mapped to every value it will run with: its parameters cell's own
    (``declared_values``) under the campaign file's and ``overrides`` (what its cost is estimated from)."""
    import papermill

    found = {}
    for name in spec["notebooks"]:
        notebook = notebook_path(name, root)
        declared = declared_values(papermill.inspect_notebook(str(notebook)))
        found[notebook] = {**declared, **spec["parameters"], **spec["notebook_parameters"].get(name, {}),
                           **(overrides or {})}
    return found


def campaign_plans(campaign_file: str | Path, overrides: dict | None = None, runner=None):
    """A campaign file checked as its run checks it, nothing made and no command run but a check's reads
    (``campaigns.dry_run``, through ``runner``): its spec, each notebook's values, its dry run's ``NotebookPlan``s,
    and whether its DRY_RUN makes it a dry run (``dry_run.asked``). ConfigError naming the first bad value."""
    spec = load_campaign(campaign_file)
    root = project_root(Path(campaign_file).resolve().parent)
    notebook_parameters(spec, root, overrides)
    values = notebook_values(spec, root, overrides)
    given = {path: {**spec["parameters"], **spec["notebook_parameters"].get(path.stem, {}), **(overrides or {})}
             for path in values}
    dry = dry_run.asked(given, values)
    looking = dry_run.ReadOnly(runner)
    with contextlib.chdir(root):  # where papermill runs each notebook: its relative paths read from there
        plans = [dry_run.of_notebook(path.stem, spec["campaign"], {**v, "DRY_RUN": dry or v.get("DRY_RUN", True)},
                                     given[path], looking) for path, v in values.items()]
    return spec, values, plans, dry


def estimate_campaign(campaign_file: str | Path, overrides: dict | None = None, runner=None):
    """``estimate.of_campaign`` of a campaign file, checked first as a run checks it (``campaign_plans``): each
    notebook's ``Cost`` by name, and the campaign's, whose notes say each parameter given that does nothing."""
    _, values, plans, _ = campaign_plans(campaign_file, overrides, runner)
    return priced(values, plans)


def priced(values: dict[Path, dict], plans) -> tuple[dict[str, cost.Cost], cost.Cost]:
    """``estimate.of_campaign`` of each notebook's ``values``, the campaign's notes saying what its dry run's
    ``plans`` say of the parameters given (those that do nothing there)."""
    each, whole = estimate.of_campaign(values)
    return each, replace(whole, notes=(*whole.notes, *dict.fromkeys(n for p in plans for n in p.notes)))


def _say_cost(campaign_file, overrides: dict | None, budget_s: float | None) -> dict[str, float]:
    """The estimate, the first lines a run prints (stderr); ConfigError where it cannot fit ``budget_s``. Returns
    each notebook's estimated wall time of the notebooks after it (their progress lines' ETA adds it)."""
    each, whole = estimate_campaign(campaign_file, overrides)
    print("\n".join(estimate.lines(each, whole)), file=sys.stderr, flush=True)
    said = cost.fits(whole, budget_s, each) if budget_s is not None else None
    if said:
        raise ConfigError(f"--budget: the campaign cannot fit: {said}")
    walls = [c.wall_s[1] for c in each.values()]
    return {name: sum(walls[i + 1:]) for i, name in enumerate(each)}


def run_campaign(campaign_file: str | Path, reports_dir: str | Path | None = None,
                 overrides: dict | None = None, resume: bool = False, force_resume: bool = False,
                 reanalyze: bool = False, budget_s: float | None = None) -> list[Path]:
    """Execute each notebook of the campaign with papermill; return the HTML reports written. With ``resume`` (or
    ``force_resume``), notebooks that finished in the interrupted run are not executed again (their reports stay)
    and the others continue their own campaigns. With ``reanalyze``, every notebook is executed again on the
    campaign's stored runs (``measure.resume``: nothing is measured) and its report published anew. Before
    anything runs, the campaign's estimated cost is printed (``estimate``), and refused where it cannot fit
    ``budget_s``."""
    import papermill

    if reanalyze and (resume or force_resume):
        raise ConfigError("--reanalyze measures nothing and --resume measures what is missing: give one of them")
    spec = load_campaign(campaign_file)
    root = project_root(Path(campaign_file).resolve().parent)
    run_values = {"RESUME": True, "FORCE_RESUME": force_resume} if resume or force_resume else {}
    parameters = notebook_parameters(spec, root, overrides, run_values)
    later = _say_cost(campaign_file, overrides, budget_s) if not reanalyze else {}
    notebooks = [notebook_path(name, root) for name in spec["notebooks"]]
    out = (Path(reports_dir) if reports_dir else root / "reports") / spec["campaign"]
    out.mkdir(parents=True, exist_ok=True)
    with lock.Lock.take(out, System()), _progress_lines(), _reanalysis(reanalyze):
        if reanalyze:  # the measuring run's progress stays as it was: the index names the runs that measured
            progress = {"started": _progress(out, True)["started"] if (out / PROGRESS_FILE).exists() else "",
                        "done": []}
        else:
            progress = _progress(out, resume or force_resume)
        published = [out / nb.with_suffix(".html").name for nb in notebooks if nb.name in progress["done"]]
        for notebook in notebooks:
            if notebook.name in progress["done"]:
                continue
            executed = out / notebook.name
            os.environ[live.LATER] = f"{later.get(notebook.stem, 0.0):.0f}"
            try:
                execute_notebook(notebook, executed, parameters[notebook], root, progress_bar=False,
                                 stdout_file=TerminalEcho())
            except papermill.PapermillExecutionError as exc:
                again = "--reanalyze again" if reanalyze else "--resume continues from there"
                raise errors.kind(exc.ename)(f"{notebook.name} stopped with {exc.ename}: {exc.evalue} (the "
                                             f"executed notebook is {executed}); after a fix, {again}") from None
            published.append(export_html(executed, executed.with_suffix(".html")))
            progress["done"].append(notebook.name)
            if not reanalyze:
                _write_progress(out, progress)
            now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            write_index(out, spec["campaign"], spec["description"],
                        campaign_runs(spec["campaign"], parameters, progress["started"]),
                        f"{now}, re-analysed from the stored runs (nothing was measured again)" if reanalyze else now)
    return published


def execute_notebook(notebook: Path, executed: Path, parameters: dict, cwd: Path, **options) -> None:
    """papermill's ``execute_notebook`` of ``notebook`` into ``executed`` with ``parameters``, in ``cwd``, its kernel
    the python3 kernel on ZeroMQ's IPC transport (``kernel.LocalKernelManager``: no TCP port, so no warning of one
    unencrypted); ``options`` go to papermill (``progress_bar``, ``stdout_file``...)."""
    import papermill

    from .jupyter_kernel import LocalKernelManager

    papermill.execute_notebook(str(notebook), str(executed), parameters=parameters, cwd=str(cwd),
                               kernel_name="python3", kernel_manager_class=LocalKernelManager, **options)


def notebook_parameters(spec: dict, root: Path, overrides: dict | None = None,
                        run_values: dict | None = None) -> dict[Path, dict]:
    """Each notebook of the campaign ``spec`` (``load_campaign``'s) mapped to the parameters papermill gives it, all
    checked before the first one runs: each declared by the notebook, of the right type and range, and together
    with the values its parameters cell gives, keeping the rules its report needs (``parameters.check``).
    ``run_values`` (``RESUME``, ``FORCE_RESUME``) go to the notebooks that declare them."""
    import papermill

    run_values = run_values or {}
    parameters = {}
    for name in spec["notebooks"]:
        notebook = notebook_path(name, root)
        declared = papermill.inspect_notebook(str(notebook))
        given = {**spec["parameters"], **spec["notebook_parameters"].get(name, {}), **(overrides or {})}
        schema.check({**declared_values(declared), **given}, parts_of(declared), where=f"{notebook.name}")
        named = {"CAMPAIGN": spec["campaign"]} if "CAMPAIGN" in declared else {}
        parameters[notebook] = {**given, **named, **{k: v for k, v in run_values.items() if k in declared}}
        if run_values and "RESUME" not in declared:
            log.warning("%s declares no RESUME parameter: it has no campaign of its own to resume and runs afresh",
                        notebook.name)
        check_parameters(notebook, given, declared)
    return parameters


class TerminalEcho:
    """papermill's ``stdout_file``: of what a notebook prints, the progress lines only (``measure.progress.MARK``),
    without their mark, to the terminal's stderr (papermill's own bar is off: one progress line, one ETA)."""

    def __init__(self) -> None:
        self.pending = ""

    def write(self, text: str) -> None:
        from tqdm import tqdm

        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            if line.startswith(live.MARK):
                tqdm.write(line[len(live.MARK):], file=sys.stderr)

    def flush(self) -> None:
        sys.stderr.flush()


@contextmanager
def _progress_lines():
    """Kernels started meanwhile print each run's progress line (``FLASHSCALE_PROGRESS=lines``), its ETA with the
    notebooks after it (``FLASHSCALE_LATER_S``, set before each)."""
    before = os.environ.get(live.ENVIRONMENT)
    os.environ[live.ENVIRONMENT] = "lines"
    try:
        yield
    finally:
        os.environ.pop(live.LATER, None)
        if before is None:
            os.environ.pop(live.ENVIRONMENT, None)
        else:
            os.environ[live.ENVIRONMENT] = before


@contextmanager
def _reanalysis(on: bool):
    """Kernels started meanwhile read each campaign back instead of measuring it (``measure.resume``)."""
    if not on:
        yield
        return
    os.environ[REANALYZE] = "1"
    try:
        yield
    finally:
        os.environ.pop(REANALYZE, None)


def _progress(out: Path, resume: bool) -> dict:
    """The notebooks a campaign's run finished and when it started: kept when resuming, else begun anew."""
    path = out / PROGRESS_FILE
    if resume and path.exists():
        try:
            known = json.loads(path.read_text())
            return {"started": str(known["started"]), "done": [str(n) for n in known["done"]]}
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"{path} cannot be read: remove it to execute every notebook again") from None
    progress = {"started": datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ"), "done": []}
    _write_progress(out, progress)
    return progress


def _write_progress(out: Path, progress: dict) -> None:
    tmp = out / f".{PROGRESS_FILE}.tmp"
    tmp.write_text(json.dumps(progress, indent=1))
    tmp.replace(out / PROGRESS_FILE)


def campaign_runs(campaign: str, parameters: dict, since: str) -> list[dict]:
    """``campaign_folder.campaign_facts`` of every campaign.json the campaign's notebooks wrote from ``since`` (a run_id) on,
    under ``<DATA_DIR>/<campaign>`` of each notebook's parameters."""
    folders = {campaign_folder.data_root(given.get("DATA_DIR", "data/campaigns")) / campaign for given in parameters.values()}
    found = [campaign_folder.campaign_facts(path) for folder in sorted(folders) if folder.is_dir()
             for path in sorted(folder.rglob(campaign_folder.CAMPAIGN_JSON))]
    return [facts for facts in found if facts["run_id"] >= since]
