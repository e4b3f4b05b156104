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
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import yaml

from .errors import ConfigError
from .measure import raw, results
from .paths import project_root
from .publish.report import export_html, write_index

CAMPAIGN_KEYS = {"campaign", "description", "notebooks", "parameters", "notebook_parameters"}


def load_campaign(path: str | Path) -> dict:
    """Read and check a campaign file; ConfigError names what is wrong."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"campaign file {str(path)!r} does not exist")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a campaign file is a mapping with keys {sorted(CAMPAIGN_KEYS)}")
    unknown = set(data) - CAMPAIGN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {sorted(unknown)}; expected {sorted(CAMPAIGN_KEYS)}")
    name = data.get("campaign")
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ConfigError(f"{path}: campaign={name!r} must be a plain folder name")
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
    return {"campaign": name, "description": data.get("description", ""), "notebooks": notebooks,
            "parameters": parameters, "notebook_parameters": per_notebook}


def parse_overrides(items: Iterable[str]) -> dict:
    """``NAME=VALUE`` strings (VALUE read as YAML) to a dict; ConfigError names a malformed one."""
    overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ConfigError(f"parameter override {item!r} must look like NAME=VALUE")
        overrides[name] = yaml.safe_load(value)
    return overrides


def notebook_path(name: str, root: Path) -> Path:
    path = root / "notebooks" / (name if name.endswith(".ipynb") else f"{name}.ipynb")
    if not path.exists():
        raise ConfigError(f"notebook {name!r} not found at {path}")
    return path


def check_parameters(notebook: Path, parameters: dict, declared: dict | None = None) -> None:
    """Refuse parameters the notebook does not declare (a typo would otherwise be silently ignored). ``declared``:
    the notebook's parameters cell as ``papermill.inspect_notebook`` reads it, when the caller has it already."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook)) if declared is None else declared
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ConfigError(f"{notebook.name} has no parameter(s) {unknown}; it declares {sorted(declared)}")


def run_campaign(campaign_file: str | Path, reports_dir: str | Path | None = None,
                 overrides: dict | None = None) -> list[Path]:
    """Execute each notebook of the campaign with papermill; return the HTML reports written."""
    import papermill

    spec = load_campaign(campaign_file)
    root = project_root(Path(campaign_file).resolve().parent)
    notebooks = [notebook_path(name, root) for name in spec["notebooks"]]
    parameters = {}
    for name, notebook in zip(spec["notebooks"], notebooks):  # all checked before the first one runs
        declared = papermill.inspect_notebook(str(notebook))
        given = {**spec["parameters"], **spec["notebook_parameters"].get(name, {}), **(overrides or {})}
        parameters[notebook] = {**given, "CAMPAIGN": spec["campaign"]} if "CAMPAIGN" in declared else given
        check_parameters(notebook, parameters[notebook], declared)
    out = Path(reports_dir) if reports_dir else root / "reports"
    out = out / spec["campaign"]
    out.mkdir(parents=True, exist_ok=True)
    published, started = [], datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for notebook in notebooks:
        executed = out / notebook.name
        papermill.execute_notebook(str(notebook), str(executed), parameters=parameters[notebook], cwd=str(root),
                                   kernel_name="python3", progress_bar=True)
        published.append(export_html(executed, executed.with_suffix(".html")))
        write_index(out, spec["campaign"], spec["description"], campaign_runs(spec["campaign"], parameters, started),
                    datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return published


def campaign_runs(campaign: str, parameters: dict, since: str) -> list[dict]:
    """``raw.campaign_facts`` of every campaign.json the campaign's notebooks wrote from ``since`` (a run_id) on,
    under ``<DATA_DIR>/<campaign>`` of each notebook's parameters."""
    folders = {results.data_root(given.get("DATA_DIR", "data/campaigns")) / campaign for given in parameters.values()}
    found = [raw.campaign_facts(path) for folder in sorted(folders) if folder.is_dir()
             for path in sorted(folder.rglob(raw.CAMPAIGN_JSON))]
    return [facts for facts in found if facts["run_id"] >= since]
