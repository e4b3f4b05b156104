"""bonnie++ 2.00a's CSV line parsed by field position, on its real output (tests/golden/applications)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from flashscale.errors import ConfigError, FlashscaleError
from flashscale.measure.workloads import bonnie

GOLDEN = Path(__file__).parent / "golden" / "applications" / "bonnie-2.00a.log"


def test_the_csv_line_is_found_among_the_human_table_and_read_by_position():
    fields = bonnie.csv_line(GOLDEN.read_text())
    assert len(fields) == 50 and fields[:3] == ["1.98", "2.00a", "single"]
    parsed = bonnie.parse(fields)
    assert parsed["block_write"]["value"] == 184865 * 1024  # KiB/s to bytes/s
    assert parsed["block_rewrite"]["value"] == 102167 * 1024
    assert parsed["seeks"] == {"value": 1668.0, "unit": "ops/s", "latency_ns": 96032e3, "missing_reason": None}
    assert parsed["block_write"]["latency_ns"] == 97304e3
    assert "putc" not in parsed  # -f: the per-character tests did not run, so no row at all


def test_plus_signs_are_a_missing_value_with_its_reason_never_a_number():
    parsed = bonnie.parse(bonnie.csv_line(GOLDEN.read_text()))
    for metric in ("block_read", "seq_create", "random_delete"):
        assert math.isnan(parsed[metric]["value"])
        assert parsed[metric]["missing_reason"] == bonnie.TOO_FAST
    assert parsed["seq_stat"]["latency_ns"] == 28e3


def test_concurrent_processes_add_up_and_one_too_fast_leaves_the_sum_unknown():
    one = bonnie.parse(bonnie.csv_line(GOLDEN.read_text()))
    both = bonnie.combine([one, one])
    assert both["block_write"]["value"] == 2 * one["block_write"]["value"]
    assert both["block_write"]["latency_ns"] == one["block_write"]["latency_ns"]
    assert math.isnan(both["block_read"]["value"]) and both["block_read"]["missing_reason"] == bonnie.TOO_FAST


def test_no_csv_line_and_bad_settings_are_errors():
    with pytest.raises(FlashscaleError, match="no CSV line"):
        bonnie.csv_line("Can't write block.: No space left on device\n")
    with pytest.raises(ConfigError, match="processes"):
        bonnie.Bonnie(processes=(0,))
    assert bonnie.latency_ns("1761us") == 1761e3 and bonnie.latency_ns("2s") == 2e9
    assert math.isnan(bonnie.latency_ns(""))
