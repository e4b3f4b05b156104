"""Defaults are declared once, in the dataclasses: every notebook's parameters cell is checked against them.

The quickstart is the library's defaults, parameter for parameter. The study notebooks are tiny demos: only how
much they measure (devices, sizes, caps, the sweep's axes, repetitions) may differ from the defaults; how a layout
is built and erased, and what a campaign refuses, may not.
"""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from flashscale.campaigns import campaign, cluster, parameters
from flashscale.analysis.baseline_and_tax import BASELINE_BS
from flashscale.errors import ConfigError

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
RUNNERS = Path(__file__).resolve().parents[1] / "runners"
# What a tiny demo may choose for itself: how much is measured, never how.
SIZING = {"DEVICES", "DEVICE_SIZE", "CAP_READ_BPS", "CAP_WRITE_BPS", "RUNTIME_S", "RAMP_S", "FILE_SIZE", "RW", "BS",
          "NUMJOBS", "IODEPTH", "REPETITIONS", "LAYOUTS", "STEADY_ROUNDS", "PRECONDITION_ROUNDS_MAX"}


def parameters_cell(notebook: Path) -> dict:
    """The values a notebook's ``parameters`` cell assigns (the cell is our own code: it is executed)."""
    cells = json.loads(notebook.read_text())["cells"]
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{notebook.name} has {len(tagged)} cells tagged parameters"
    values: dict = {}
    exec("".join(tagged[0]["source"]), {}, values)
    return values


def measuring_notebooks() -> list[Path]:
    """The notebooks that build a campaign from their parameters (they declare the array's size)."""
    return [nb for nb in sorted(NOTEBOOKS.glob("*.ipynb")) if "DEVICE_SIZE" in parameters_cell(nb)]


def cluster_notebooks() -> list[Path]:
    """The notebooks that build a cluster campaign from their parameters (they declare the host counts)."""
    return [nb for nb in sorted(NOTEBOOKS.glob("*.ipynb")) if "HOSTS" in parameters_cell(nb)]


def spec_fields(spec: campaign.CampaignSpec) -> dict:
    skip = {"name", "data_dir"}
    return {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in skip}


def test_there_are_measuring_notebooks_to_check():
    names = {nb.stem for nb in measuring_notebooks()}
    assert {"quickstart", "01_baseline", "03_layout_tax"} <= names


@pytest.mark.parametrize("notebook", measuring_notebooks(), ids=lambda p: p.stem)
def test_every_notebook_parameter_builds_a_valid_campaign(notebook):
    cell = parameters_cell(notebook)
    spec = campaign.CampaignSpec.from_parameters(**cell)
    assert spec.name == cell.get("CAMPAIGN", spec.name)
    assert cell.get("BASELINE_BS", BASELINE_BS) == BASELINE_BS


def test_the_quickstart_is_the_library_defaults():
    cell = parameters_cell(NOTEBOOKS / "quickstart.ipynb")
    ours = spec_fields(campaign.CampaignSpec.from_parameters(**cell))
    defaults = spec_fields(campaign.CampaignSpec.from_parameters())
    differ = {k: (ours[k], defaults[k]) for k in ours if ours[k] != defaults[k]}
    assert differ == {}, f"the quickstart's parameters cell differs from the dataclass defaults: {differ}"


@pytest.mark.parametrize("notebook", [nb for nb in measuring_notebooks() if nb.stem != "quickstart"],
                         ids=lambda p: p.stem)
def test_a_study_notebook_differs_from_the_defaults_only_in_how_much_it_measures(notebook):
    cell = parameters_cell(notebook)
    defaults = campaign.CampaignSpec.from_parameters()
    restated = {name: value for name, value in cell.items() if name in parameters.PARAMETERS and name not in SIZING}
    spec = campaign.CampaignSpec.from_parameters(**restated)
    differ = {k: v for k, v in spec_fields(spec).items() if v != spec_fields(defaults)[k]}
    assert differ == {}, f"{notebook.name} restates {sorted(restated)}; these differ from the defaults: {differ}"


def test_a_changed_default_is_caught():
    """The check above is not vacuous: a notebook value other than the default is reported."""
    cell = {**parameters_cell(NOTEBOOKS / "quickstart.ipynb"), "CHUNK_BYTES": 65536}
    spec = campaign.CampaignSpec.from_parameters(**cell)
    assert spec.options.chunk_bytes == 65536 != campaign.CampaignSpec.from_parameters().options.chunk_bytes


def test_there_is_a_cluster_notebook_to_check():
    assert [nb.stem for nb in cluster_notebooks()] == ["10_cluster"]


@pytest.mark.parametrize("notebook", cluster_notebooks(), ids=lambda p: p.stem)
def test_a_cluster_notebook_s_parameters_pass_the_check_and_differ_from_the_defaults_only_in_what_it_emulates(notebook):
    """The cluster's demo may choose how much it measures, the storage it emulates and its link's cap; the rest
    (its subnet, its remote hosts: none) restates the defaults."""
    cell = parameters_cell(notebook)
    parameters.check(cell, cluster.PARTS, where=notebook.name)
    spec = cluster.ClusterSpec.from_parameters(**cell)
    assert spec.name == cell["CAMPAIGN"] and spec.hosts == tuple(cell["HOSTS"])
    chosen = SIZING | {"HOSTS", "STORAGE", "LINK_BPS"}
    restated = {name: value for name, value in cell.items() if name in parameters.PARAMETERS and name not in chosen}
    assert {"SUBNET", "REMOTE_HOSTS"} <= set(restated)
    assert cluster.ClusterSpec.from_parameters(**restated) == cluster.ClusterSpec.from_parameters()


def test_the_cluster_campaign_file_gives_its_notebook_valid_parameters():
    """``make demo-cluster``: the campaign file's parameters over the notebook's cell build a valid cluster, and a
    bad one in their place is refused naming it."""
    spec = yaml.safe_load((RUNNERS / "cluster.yaml").read_text())
    for name in spec["notebooks"]:
        given = {**parameters_cell(NOTEBOOKS / f"{name}.ipynb"), **spec["parameters"]}
        built = cluster.ClusterSpec.from_parameters(**given)
        assert built.storage == tuple(given["STORAGE"]) and built.link_bps == given["LINK_BPS"]
        with pytest.raises(ConfigError, match="HOSTS=\\[0\\]"):
            cluster.ClusterSpec.from_parameters(**{**given, "HOSTS": [0]})


@pytest.mark.parametrize("name, value, said", [
    ("BS", ["4k", 2**20], "'4k' is 4096 bytes (k = 1024, as fio's bs=4k): a size parameter takes whole bytes, "
                          "write 4096"),
    ("FILE_SIZE", "64MiB", "'64MiB' is 67108864 bytes"), ("CHUNK_BYTES", "512k", "'512k' is 524288 bytes"),
    ("DEVICE_SIZE", "1G", "'1G' is 1073741824 bytes"),
    ("CHUNK_BYTES", "lots", "'lots' is not a size: give whole bytes with an optional unit"),
])
def test_a_size_parameter_written_as_text_is_refused_with_the_bytes_it_reads_as(name, value, said):
    """A notebook computes with the number its parameters cell is given, so a size parameter takes whole bytes; text
    is read by the one reader of sizes (``units.read_size``) to say what to write instead."""
    with pytest.raises(ConfigError, match=f"{name}=") as refused:
        campaign.CampaignSpec.from_parameters(**{name: value})
    assert said in str(refused.value)
    whole = {"BS": [4096, 2**20], "FILE_SIZE": 64 * 2**20, "CHUNK_BYTES": 2**19, "DEVICE_SIZE": 2**30}[name]
    parameters.check({name: whole}, campaign.PARTS)  # the bytes it said are taken
