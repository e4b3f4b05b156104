"""The analysis' defaults that the command line offers, in a module that imports nothing: ``flashscale analyze
--help`` and ``flashscale plan --help`` show them without importing pandas, numpy or scipy (which cost the help
seconds). Each module that computes with one names it as before, imported from here.

    BASELINE_BS, BY_CHOICES   the single-device baseline's block size, the extra grouping (``baseline_and_tax``)
    DEFAULT_MARGIN            the tax's margin of practical equivalence (``agreement`` says why 2%)
    MAX_DEVICES               the largest count ``plan`` tries (``prediction.sizing`` says why)
"""
from __future__ import annotations

BY_CHOICES = ("bs",)
BASELINE_BS = 1048576  # 1 MiB, as seed 000 chose
DEFAULT_MARGIN = 0.02  # a difference below 2% is within one rerun of the same layout on real NVMe devices
MAX_DEVICES = 512
