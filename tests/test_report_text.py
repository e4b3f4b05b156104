"""What a published report says besides its numbers: each figure's alt text, the index's when/where/on what, and
no warning of ours (tqdm.auto without ipywidgets)."""
from __future__ import annotations

import base64
import importlib.util
import json
import logging
import sys

import matplotlib
import nbformat
import pandas as pd
from bs4 import BeautifulSoup
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

from flashscale.measure import campaign_folder
from flashscale.campaigns import campaign
from flashscale.notebooks import execute
from flashscale.publish import plots, report
from flashscale.publish.alt_text import describe

matplotlib.use("Agg")

SUMMARY = pd.DataFrame({"layout": ["single", "jbod", "btrfs-raid0"], "devices": [1, 4, 4], "rw": ["read"] * 3,
                        "efficiency": [1.0, 0.97, 0.81], "tax": [None, 0.0, 0.17]})


def test_a_figure_says_what_it_shows():
    text = describe(plots.efficiency(SUMMARY))
    assert text.startswith("Figure: Scaling efficiency against N x baseline.")
    assert "efficiency (from 0 to 1) against layout (devices)" in text
    assert "Legend: read." in text


def test_ipython_shows_a_figure_with_its_alt_text_in_the_png_metadata():
    formatter = DisplayFormatter()
    formatter.formatters["image/png"].for_type(Figure, lambda fig: "PNG BYTES")  # what the inline backend does
    data, metadata = formatter.format(plots.tax(SUMMARY, "jbod"))
    assert data["image/png"] == "PNG BYTES"
    assert metadata["image/png"]["alt"] == describe(plots.tax(SUMMARY, "jbod"))
    assert "Tax against jbod (same devices)" in metadata["image/png"]["alt"]


def _notebook_with_image(tmp_path, metadata: dict):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("plots.tax(summary)", outputs=[nbformat.v4.new_output(
        "display_data", data={"image/png": png, "text/plain": "<Figure>"}, metadata=metadata)])]
    path = tmp_path / "figure.ipynb"
    nbformat.write(notebook, path)
    return path


def test_export_writes_the_alt_text_and_nbconvert_warns_of_none_missing(tmp_path, caplog):
    executed = _notebook_with_image(tmp_path, {"image/png": {"alt": 'Tax "against" jbod & co'}})
    with caplog.at_level(logging.WARNING):
        html = report.export_html(executed, tmp_path / "figure.html").read_text()
    assert BeautifulSoup(html, "html.parser").find("img")["alt"] == 'Tax "against" jbod & co'
    assert "Alternative text is missing" not in caplog.text
    assert "No description has been provided" not in html


def test_export_without_alt_text_is_the_case_nbconvert_warns_about(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        html = report.export_html(_notebook_with_image(tmp_path, {}), tmp_path / "figure.html").read_text()
    assert "No description has been provided for this image" in html  # what the figures' alt text prevents
    assert "Alternative text is missing on 1 image(s)" in caplog.text


def _campaign_json(folder, run_id: str, backend: str = "loop", devices: int = 4):
    folder.mkdir(parents=True)
    (folder / "campaign.json").write_text(json.dumps({
        "run_id": run_id, "spec": {"array": {"devices": devices, "read_bps": 200e6, "write_bps": 100e6},
                                   "testbed": None, "use_devices": None},
        "environment": {"hostname": "node7", "kernel": "6.1.0-18", "fio": "fio-3.33", "backend": backend}}))
    return folder / "campaign.json"


def test_the_index_says_when_where_and_on_what_the_campaign_ran(tmp_path):
    runs = [campaign_folder.campaign_facts(_campaign_json(tmp_path / "a", "20261123T153817Z")),
            campaign_folder.campaign_facts(_campaign_json(tmp_path / "b", "20261123T160102Z", "directory"))]
    page = report.write_index(tmp_path, "quickstart", "why", runs, "2026-11-23 16:05 UTC").read_text()
    assert "Published 2026-11-23 16:05 UTC." in page
    assert "Measured from 2026-11-23 15:38 UTC to 2026-11-23 16:01 UTC (2 campaign run(s)) on host node7 " \
           "(Linux 6.1.0-18, fio-3.33)." in page
    assert "On 4 emulated device(s) (capped loop devices), 200 MB/s read, 100 MB/s write each; plain directories " \
           "on the local disk (no devices, no caps)." in page
    assert "Nothing was measured" in report.write_index(tmp_path, "reference", "", [], "now").read_text()


def test_the_index_counts_only_the_campaign_runs_of_this_publication(tmp_path):
    data = tmp_path / "data"
    _campaign_json(data / "study" / "01_baseline", "20261123T153817Z")
    _campaign_json(data / "study" / "02_scaling" / "devices2", "20261123T154000Z", devices=2)
    _campaign_json(data / "study" / "01_baseline.20261122T000000Z", "20261122T000000Z")  # an earlier run
    _campaign_json(data / "other", "20261123T160000Z")
    runs = execute.campaign_runs("study", {"01_baseline": {"DATA_DIR": str(data)}}, since="20261123T150000Z")
    assert sorted(run["devices"] for run in runs) == [2, 4]


def test_no_tqdm_auto_without_ipywidgets(monkeypatch):
    """tqdm.auto imported in a notebook kernel without ipywidgets warns (TqdmWarning: IProgress not found)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    for name in ("tqdm.auto", "tqdm.autonotebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with campaign._progress_bar(3, "quickstart", shown=False) as bar:
        bar.update(1)
    assert "tqdm.autonotebook" not in sys.modules
    assert type(bar).__module__ == "tqdm.std"



def test_the_record_stays_in_the_notebook_and_leaves_the_report(tmp_path):
    numbers = {"baseline_bw_bytes": {"read": 201192500.0}, "headline": {"baseline read": "201 MB/s"}}
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("## Key numbers"), nbformat.v4.new_code_cell(
        "report.record(numbers)", outputs=[nbformat.v4.new_output("display_data", data={
            report.RECORD_MIME: numbers, "text/plain": "2 key numbers recorded"})])]
    executed = tmp_path / "recorded.ipynb"
    nbformat.write(notebook, executed)
    html = report.export_html(executed, tmp_path / "recorded.html").read_text()
    shown = BeautifulSoup(html, "html.parser").get_text()
    assert "Key numbers" in shown
    assert "201192500" not in shown and "baseline_bw_bytes" not in shown and "key numbers recorded" not in shown
    assert report.read_record(executed) == numbers  # the machine's copy is untouched
