"""Published reports: the numbers a notebook records, its HTML export, and the index page of a campaign's reports.

``record(numbers)`` displays a notebook's key numbers under a MIME type of flashscale's own, so the executed notebook
carries them; ``read_record`` reads them back (tests, ``08_compare``, the index). ``export_html`` turns an executed
notebook into a report with the code hidden; ``write_index`` links a campaign's reports with their headline numbers.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError


def export_html(executed: Path, html: Path) -> Path:
    """The executed notebook as a report: code cells hidden, markdown, figures and tables kept."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    html.write_text(body)
    return html


RECORD_MIME = "application/vnd.flashscale.record+json"


def key_numbers(summary, baseline, backend: str, notes: list[str]) -> dict:
    """The numbers a report stands on, as plain JSON: baseline per rw, efficiency and tax per layout and rw."""
    rows = {f"{r.layout}/{r.devices}/{r.rw}": {"best_bw_bytes": float(r.best_bw_bytes),
                                                "efficiency": float(r.efficiency),
                                                "tax": None if r.tax != r.tax else float(r.tax)}
            for r in summary.itertuples()}
    base = {r.rw: float(r.baseline_bw_bytes) for r in baseline.itertuples()}
    return {"backend": backend, "baseline_bw_bytes": base, "layouts": rows, "notes": list(notes)}


def record(numbers: dict) -> None:
    """Display ``numbers`` in the notebook so the executed notebook carries them (read back by read_record)."""
    import json

    from IPython.display import display

    display({RECORD_MIME: numbers, "text/plain": json.dumps(numbers, indent=1)}, raw=True)


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
    return {f"baseline {rw}": f"{bw / 1e6:,.0f} MB/s" for rw, bw in base.items()}


def write_index(out: Path, campaign: str, description: str = "") -> Path:
    """``index.html`` in ``out``: a link to every executed notebook's HTML there, with its headline numbers."""
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
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(campaign)}</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td{vertical-align:top;"
            "padding:.3em 1em;border-bottom:1px solid #ddd}ul{margin:0;padding-left:1em}</style></head><body>"
            f"<h1>{html.escape(campaign)}</h1><p>{html.escape(description)}</p>"
            f"<table><tr><th>report</th><th>headline numbers</th></tr>{''.join(rows)}</table></body></html>\n")
    index = Path(out) / "index.html"
    index.write_text(page)
    return index
