"""``flashscale reproduce`` given a campaign's data folder (data/campaigns/<campaign>) instead of its report folder:
the report that measured into it is found, one that measured elsewhere is not taken for it, and a folder that is
neither, or data whose report is nowhere, is refused naming what is missing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.errors import ConfigError
from flashscale.notebooks import reproduce


def _report(folder: Path, data_dir: str, name: str = "qs") -> Path:
    """``folder/reports/<name>`` as flashscale run leaves it: one executed notebook with papermill's parameters."""
    report = folder / "reports" / name
    report.mkdir(parents=True)
    executed = {"cells": [], "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"papermill": {"parameters": {"CAMPAIGN": name, "DATA_DIR": data_dir}}}}
    (report / "quickstart.ipynb").write_text(json.dumps(executed))
    return report


def _data(folder: Path, backend: str = "loop") -> Path:
    """A campaign's data folder: its campaign.json."""
    folder.mkdir(parents=True)
    (folder / "campaign.json").write_text(json.dumps({"run_id": "20260101T000000Z", "spec": {"name": folder.name},
                                                      "environment": {"backend": backend}}))
    return folder


def test_a_data_folder_or_a_stage_in_it_is_the_campaign_its_report_published(tmp_path):
    report = _report(tmp_path, str(tmp_path / "data"))
    data = _data(tmp_path / "data" / "qs")
    _data(data / "01_baseline")
    by_report = reproduce.published(report)
    assert reproduce.published(data) == by_report
    assert reproduce.published(data / "01_baseline") == by_report
    assert by_report.folder == report and by_report.data == (data,)


def test_flashscale_reproduce_data_campaigns_name_in_a_checkout_finds_reports_name(tmp_path, monkeypatch, capsys):
    """The newcomer's command, from the checkout: the relative data folder leads to reports/qs (this machine then
    refuses to run it, a notebook missing from this checkout, which says the report was found)."""
    checkout = tmp_path / "checkout"
    (checkout / "runners").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")
    _report(checkout, "data/campaigns")
    _data(checkout / "data" / "campaigns" / "qs")
    monkeypatch.chdir(checkout)
    assert reproduce.published("data/campaigns/qs").folder == checkout / "reports" / "qs"
    assert cli.main(["reproduce", "data/campaigns/qs"]) == 1
    assert "cannot reproduce qs on this machine: notebook quickstart is not in this checkout" in capsys.readouterr().err


def test_a_report_that_measured_elsewhere_is_not_the_data_folders(tmp_path):
    _report(tmp_path, str(tmp_path / "elsewhere"))
    data = _data(tmp_path / "data" / "qs")
    with pytest.raises(ConfigError) as refused:
        reproduce.published(data)
    said = str(refused.value)
    assert f"{str(data)!r} holds measurements (campaign.json) but no report of them was found" in said
    assert "holds no executed notebook that measured into it" in said and "flashscale run" in said


def test_a_folder_that_is_neither_is_refused_naming_both(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["reproduce", str(tmp_path / "empty")]) == 1
    said = capsys.readouterr().err
    assert "holds no executed notebook and no campaign.json" in said
    assert "report folder (reports/<campaign>" in said and "data folder (data/campaigns/<campaign>)" in said
