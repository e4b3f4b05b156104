"""Published reports: the numbers a notebook records, its HTML export, and the index page of a campaign's reports.

``record(numbers)`` displays a notebook's key numbers (``records`` builds them) under a MIME type of flashscale's
own, so the executed notebook carries them; ``read_record`` reads them back (tests, ``08_compare``, the index).
The record is for machines: ``export_html`` leaves it out of the report, with the code and the progress lines
``flashscale run`` asked the kernel to print (``measure.progress``); ``write_index`` links a campaign's
reports with their headline numbers. ``how_made`` is the last section of every report: the software and machine
that measured its campaigns (their campaign.json), the software that analysed them, and what changed between the two
(``system.provenance``); the index says the measuring software too.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..measure import campaign_folder
from ..measure.progress import MARK
from ..system.provenance import commit_words, differences, lock_words, software
from ..measure.fio_import.reader import BACKEND as IMPORTED
from ..measure.units import rate


# nbconvert's lab template writes no alt on images (its classic one does); this one adds the output's
# ``image/png`` metadata ``alt`` (``alt_text.described`` puts it there) to lab's own markup.
ALT_TEMPLATE = """{%- extends 'index.html.j2' -%}
{% block data_png scoped %}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
{%- set alttext = (output | get_metadata('alt', 'image/png')) or (cell | get_metadata('alt')) %}
{%- if alttext %} alt="{{ alttext | escape_html }}"{% endif %}
{%- set width = output | get_metadata('width', 'image/png') %}
{%- if width is not none %} width={{ width | escape_html }}{% endif %}
{%- set height = output | get_metadata('height', 'image/png') %}
{%- if height is not none %} height={{ height | escape_html }}{% endif %}
>
</div>
{%- endblock data_png %}
"""


def export_html(executed: Path, html: Path) -> Path:
    """The executed notebook as a report: code cells hidden, markdown, figures (with their alt text) and tables."""
    import nbformat
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                            template_file="flashscale.html.j2",
                            extra_loaders=[DictLoader({"flashscale.html.j2": ALT_TEMPLATE})])
    body, _ = exporter.from_notebook_node(without_record(without_progress(nbformat.read(executed, as_version=4))))
    html.write_text(body)
    return html


def without_progress(notebook):
    """The notebook with every progress line (``measure.progress.MARK``) taken out of its stdout, and an output
    left empty by that dropped."""
    for cell in notebook.cells:
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                text = "".join(output.get("text", ""))
                output["text"] = "".join(line for line in text.splitlines(keepends=True) if not line.startswith(MARK))
                if not output["text"]:
                    continue
            kept.append(output)
        if "outputs" in cell:
            cell["outputs"] = kept
    return notebook


RECORD_MIME = "application/vnd.flashscale.record+json"


def without_record(notebook):
    """The notebook without the outputs that carry its record: a report's reader sees the numbers in its tables
    and sentences, never the JSON behind them (the executed notebook keeps it for ``read_record``)."""
    for cell in notebook.cells:
        if "outputs" in cell:
            cell["outputs"] = [o for o in cell["outputs"] if RECORD_MIME not in o.get("data", {})]
    return notebook


def record(numbers: dict) -> None:
    """Display ``numbers`` in the notebook so the executed notebook carries them (read back by read_record); in
    JupyterLab a line says so, the numbers themselves are under ``RECORD_MIME``."""
    from IPython.display import display

    said = f"{len(numbers)} key numbers recorded for the tests, 08_compare and the index ({RECORD_MIME})"
    display({RECORD_MIME: numbers, "text/plain": said}, raw=True)


def read_record(executed: str | Path) -> dict:
    """The numbers ``record`` left in an executed notebook (the last record wins)."""
    import nbformat

    found = None
    for cell in nbformat.read(str(executed), as_version=4).cells:
        for output in cell.get("outputs", []):
            if RECORD_MIME in output.get("data", {}):
                found = output["data"][RECORD_MIME]
    if found is None:
        raise ConfigError(f"{executed} holds no flashscale record")
    return dict(found)


def headline(numbers: dict) -> dict[str, str]:
    """The few numbers an index shows for a report: its ``headline`` if it recorded one, else its baselines."""
    if isinstance(numbers.get("headline"), dict):
        return {str(k): str(v) for k, v in numbers["headline"].items()}
    base = numbers.get("baseline_bw_bytes") or {}
    return {f"baseline {rw}": rate(bw) for rw, bw in base.items()}


def _when(run_id: str) -> str:
    """``20261123T153817Z`` as ``2026-11-23 15:38 UTC``."""
    from datetime import datetime

    return datetime.strptime(run_id, "%Y%m%dT%H%M%SZ").strftime("%Y-%m-%d %H:%M UTC")


def _emulated_words(run: dict) -> str:
    """An emulated array's devices and caps, naming each device below the cap (CAP_SCALE: "device 4 at 50% of the
    cap")."""
    caps = ", ".join(f"{rate(run[key])} {rw}" for key, rw in (("read_bps", "read"), ("write_bps", "write"))
                     if run.get(key))
    scaled = [f"device {index} at {factor * 100:g}%" for index, factor in enumerate(run.get("cap_scale") or [], 1)
              if factor != 1]
    caps = f"{caps} each" + (f"; {', '.join(scaled)} of the cap" if scaled else "") if caps else ""
    return f"{run.get('devices') or 0} emulated device(s) (capped loop devices){', ' + caps if caps else ', no caps'}"


# What a campaign recorded before its place said what it measured on (``campaigns.place.Place.words``, kept in
# campaign.json as ``place``) is said from its backend's name; any other backend of then was the emulated array's.
EARLIER_WORDS = {
    IMPORTED: lambda run: "fio output imported by flashscale import: the devices and layouts its file names or the "
                          "map gave",
    "testbed": lambda run: f"{run.get('devices') or 0} real device(s) of the test bed {run.get('testbed')}, no caps",
    "directory": lambda run: "plain directories on the local disk (no devices, no caps)",
}


def _on_what(run: dict) -> str:
    """What one campaign measured on: what its place said (``campaign_folder.campaign_facts``' ``place``), else what its
    backend's name says (``EARLIER_WORDS``, the emulated array's devices and caps by default)."""
    if run.get("place"):
        return str(run["place"])
    return EARLIER_WORDS.get(run.get("backend"), _emulated_words)(run)


def provenance(runs: list[dict], published: str = "") -> list[str]:
    """When, where and on what a campaign's reports were measured, in sentences, from its campaigns' facts."""
    lines = [f"Published {published}."] if published else []
    if not runs:
        return lines + ["Nothing was measured for these reports: they read numbers recorded earlier."]
    stamps = sorted(run["run_id"] for run in runs if run.get("run_id"))
    when = f"from {_when(stamps[0])} to {_when(stamps[-1])}" if len(set(stamps)) > 1 else f"at {_when(stamps[0])}"
    where = sorted({f"host {run['hostname']} (Linux {run['kernel']}, {run['fio']})" for run in runs})
    lines += [f"Measured {when} ({len(runs)} campaign run(s)) on {'; '.join(where)}.", _measured_software(runs)]
    return lines + [f"On {'; '.join(dict.fromkeys(_on_what(run) for run in runs))}."]


def _software_words(facts: dict) -> str:
    """``flashscale 0.1.0 (commit 96bb5720ab, lock requirements.lock a1b2c3d4e5), Python 3.11.2``."""
    if facts.get(IMPORTED):
        return "fio alone (imported output: flashscale did not measure it)"
    if not facts:
        return "software not recorded (a campaign from before flashscale kept it)"
    return (f"flashscale {facts.get('flashscale') or '(version unknown)'} ({commit_words(facts)}, "
            f"{lock_words(facts)}), Python {facts.get('python') or '(version unknown)'}")


def _in_vm(run: dict) -> str:
    return f", in a VM of {run['qemu']}" if run.get("qemu") else ""


def _measured_software(runs: list[dict]) -> str:
    """The index's sentence on the software that measured ``runs``: once when they all share it, else each with
    its number of campaign runs."""
    said = {}
    for run in runs:
        words = _software_words(_measuring_software(run)) + _in_vm(run)
        said[words] = said.get(words, 0) + 1
    if len(said) == 1:
        return f"Measured with {next(iter(said))}."
    return "Measured " + "; ".join(f"{n} campaign run(s) with {words}" for words, n in said.items()) + "."


def _campaigns(given) -> list[tuple[str, dict]]:
    """(label, ``campaign_folder.campaign_facts``) of every campaign under ``given`` (paths, or one path): a campaign's folder
    or campaign.json, or a stage or study holding several, each labelled with its folder below the path given."""
    found = []
    for path in [given] if isinstance(given, (str, Path)) else list(given or ()):
        base = Path(path) if Path(path).is_dir() else Path(path).parent
        for campaign_json in campaign_folder.campaign_jsons(path):
            below = campaign_json.parent.relative_to(base)
            label = base.name if below == Path(".") else f"{base.name}/{below}"
            found.append((label, campaign_folder.campaign_facts(campaign_json)))
    return found


def _times(run_ids: list[str]) -> str:
    """When campaigns ran, from their run ids: ``2026-11-23 15:38 UTC`` or ``from ... to ...``."""
    try:
        stamps = sorted({_when(run_id) for run_id in run_ids})
    except ValueError:  # a run id that is no time stamp: said as it is
        stamps = sorted(set(run_ids))
    return stamps[0] if len(stamps) == 1 else f"from {stamps[0]} to {stamps[-1]}"


def _grouped(found: list[tuple[str, dict]], words) -> dict[str, list[tuple[str, dict]]]:
    """``found`` grouped by what ``words`` says of each campaign's facts, in the order first seen."""
    groups: dict[str, list[tuple[str, dict]]] = {}
    for label, facts in found:
        groups.setdefault(words(facts), []).append((label, facts))
    return groups


def _names(group: list[tuple[str, dict]]) -> str:
    return ", ".join(f"`{label}`" for label, _ in group)


def _measuring_software(facts: dict) -> dict:
    """The software that measured a campaign: its record, or for an import's folder a mark that fio alone did."""
    return {IMPORTED: True} if facts.get("backend") == IMPORTED else facts.get("software") or {}


def _measured_words(facts: dict) -> str:
    """The software and machine that measured one campaign (``campaign_folder.campaign_facts``), in words."""
    if facts.get("backend") == IMPORTED:
        hosts = facts.get("hostname") or "hosts its output does not name"
        return (f"fio ({facts.get('fio') or 'version not in its output'}) on {hosts}, imported by flashscale import "
                f"({facts.get('imports') or 1} import(s)); the kernel and machine that ran fio are not in its output")
    return (f"{_software_words(facts.get('software') or {})}; {facts.get('fio') or 'fio'}, Linux "
            f"{facts.get('kernel') or '(unknown)'} on host {facts.get('hostname') or '(unknown)'}, the "
            f"{facts.get('backend') or '(unknown)'} backend{_in_vm(facts)}")


def _compared(found: list[tuple[str, dict]], now: dict) -> list[str]:
    """Whether the software that measured each campaign is ``now``'s, and each version that changed, in sentences;
    campaigns measured with the same software share one (then named, when there are several)."""
    groups = _grouped(found, lambda facts: json.dumps(_measuring_software(facts), sort_keys=True))
    lines = []
    for group in groups.values():
        then = _measuring_software(group[0][1])
        named = f" {_names(group)}" if len(groups) > 1 else ""
        changed = differences(then, now) if then and not then.get(IMPORTED) else []
        if then.get(IMPORTED):
            lines.append(f"- {_names(group)} was measured by fio alone and imported: flashscale analysed it, "
                         "nothing of flashscale's measured it.")
        elif not then:
            lines.append(f"- The software that measured {_names(group)} was not recorded (a campaign from before "
                         "flashscale kept it): whether it was analysed with the same cannot be said.")
        elif changed:
            lines.append(f"- Analysed with other software than measured{named}: {'; '.join(changed)}.")
        else:
            lines.append(f"- Analysed with the same software as measured{named}.")
    return lines


def how_made(campaigns=None, now: dict | None = None) -> str:
    """The section "How this was made" that ends every report, in Markdown: what measured each campaign of
    ``campaigns`` (a campaign's folder or its campaign.json, a stage or a study holding several, or a list of
    them; None: the report measured nothing) from its campaign.json, campaigns measured alike in one line; the
    software analysing it now (``now``, by default this process's ``provenance.software()``); and each version that
    changed between the two (``provenance.differences``), or that none did."""
    now = software() if now is None else now
    found = _campaigns(campaigns)
    lines = ["## How this was made", ""]
    if campaigns is None:
        lines.append("- **Measured**: nothing; this report reads numbers published earlier.")
    elif not found:
        lines.append("- **Measured**: no campaign record (campaign.json) was found for this report, so what measured "
                     "it is unknown.")
    for said, group in _grouped(found, _measured_words).items():
        when = _times([facts.get("run_id", "") for _, facts in group])
        lines.append(f"- **Measured**: {_names(group)} ({when}) with {said}.")
    packages = ", ".join(f"{name} {version}" for name, version in (now.get("packages") or {}).items())
    lines.append(f"- **Analysed** with {_software_words(now)}{'; ' + packages if packages else ''}.")
    return "\n".join(lines + _compared(found, now)) + "\n"


def write_index(out: Path, campaign: str, description: str = "", runs: list[dict] | None = None,
                published: str = "") -> Path:
    """``index.html`` in ``out``: when, where and on what the campaign ran (``provenance`` of ``runs``, each
    ``campaign_folder.campaign_facts``), then a link to every executed notebook's HTML there, with its headline numbers."""
    import html

    rows = []
    for executed in sorted(Path(out).glob("*.ipynb")):
        try:
            numbers = headline(read_record(executed))
        except ConfigError:
            numbers = {"": "no numbers recorded (the notebook stopped early?)"}
        cells = "".join(f"<li>{html.escape(k)}{': ' if k else ''}<b>{html.escape(v)}</b></li>" for k, v in
                        numbers.items())
        link = executed.with_suffix(".html").name
        rows.append(f'<tr><td><a href="{html.escape(link)}">{html.escape(executed.stem)}</a></td>'
                    f"<td><ul>{cells}</ul></td></tr>")
    said = provenance(runs, published) if runs is not None else []
    facts = "".join(f"<p class='ran'>{html.escape(line)}</p>" for line in said)
    page = (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(campaign)}</title>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}td{vertical-align:top;"
            "padding:.3em 1em;border-bottom:1px solid #ddd}ul{margin:0;padding-left:1em}.ran{color:#444;margin:.2em 0}"
            "</style></head><body>"
            f"<h1>{html.escape(campaign)}</h1><p>{html.escape(description)}</p>{facts}"
            f"<table><tr><th>report</th><th>headline numbers</th></tr>{''.join(rows)}</table></body></html>\n")
    index = Path(out) / "index.html"
    index.write_text(page)
    return index
