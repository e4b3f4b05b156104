"""What this machine can build, said: from the table of layouts a campaign's place can and cannot measure here
(``campaigns.campaign.layout_support``: the place asked, ``Place.support``; columns layout, supported, missing),
the layouts to run and the exact commands the others would run on a machine that can. Nothing is touched.

    layouts_to_run(support, single)  the supported layouts, with ``single`` first when a baseline is needed
    plans(support, devices, options) the command plans of the layouts this machine cannot build
    unsupported_sentences(support)   what this machine cannot build, in words
"""
from __future__ import annotations


import pandas as pd

from . import layouts
from .. import layouts as descriptors
from .build_steps import render
from ..system.devices import Device

MOUNTED = descriptors.MOUNTED  # an existing mount point (GPFS, BeeGFS, NFS...), measured inside, never built


def layouts_to_run(support: pd.DataFrame, with_single: bool) -> list[str]:
    """The supported layouts, with ``single`` first when the stage must measure its own baseline."""
    names = list(support.loc[support["supported"], "layout"])
    return (["single"] if with_single and "single" not in names else []) + names


def plans(support: pd.DataFrame, devices: int, options: layouts.Options) -> str:
    """The exact commands each layout this machine cannot build would run on one that can, on ``devices`` (at
    least 2) example devices ``/dev/nvme<i>n1`` built with ``options``: the command plans of md, IMSM and LVM,
    shown rather than run."""
    examples = [Device(f"/dev/nvme{i}n1", f"example:{i}") for i in range(max(2, devices))]
    blocks = [f"# {name}\n" + render(layouts.plan(name, examples, options=options, token="NAME"))
              for name in support.loc[~support["supported"], "layout"] if name in layouts.DEVICE_LAYOUTS]
    return "\n".join(blocks)


def unsupported_sentences(support: pd.DataFrame) -> list[str]:
    """What this machine cannot build, and what it lacks for each."""
    return [f"{r.layout} is not measured here: {r.missing}." for r in support.itertuples() if not r.supported]
