"""bonnie++ 2.00a's CSV line parsed by field position, on its real output (tests/golden/applications)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from flashscale.arrays.layouts import Layout
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
    assert parsed["block_write"]["latency_ns"] == pytest.approx(97304e3)
    assert "putc" not in parsed  # -f: the per-character tests did not run, so no row at all


def test_plus_signs_are_a_missing_value_with_its_reason_never_a_number():
    parsed = bonnie.parse(bonnie.csv_line(GOLDEN.read_text()))
    for metric in ("seq_create", "random_delete"):
        assert math.isnan(parsed[metric]["value"])
        assert parsed[metric]["missing_reason"] == bonnie.TOO_FAST
    # the block read after the rewrite, and a stat, read memory: their +++++ says so, not "a device too fast"
    assert math.isnan(parsed["block_read"]["value"]) and parsed["block_read"]["missing_reason"] == bonnie.CACHED
    assert parsed["seq_stat"]["missing_reason"] == bonnie.STAT_CACHED
    assert parsed["seq_stat"]["latency_ns"] == pytest.approx(28e3)


def test_concurrent_processes_did_all_their_work_within_the_slowest_ones_time():
    one = bonnie.parse(bonnie.csv_line(GOLDEN.read_text()))
    slow = {**one, "block_write": {**one["block_write"], "value": one["block_write"]["value"] / 2}}
    work = bonnie.Bonnie(file_mib=512, files_k=1).work(seeks=8192)
    both = bonnie.combine([one, slow], work)
    # two processes of 512 MiB, one twice as slow: 1 GiB in the slow one's time, not the two rates summed
    assert both["block_write"]["value"] == one["block_write"]["value"]
    assert both["block_write"]["seconds"] == pytest.approx(512 * 2**20 / (184865 * 1024 / 2))
    assert both["seeks"]["value"] == 2 * 1668 and both["seeks"]["seconds"] == pytest.approx(8192 / 1668)
    assert both["block_write"]["latency_ns"] == one["block_write"]["latency_ns"]
    assert math.isnan(both["block_read"]["value"]) and both["block_read"]["missing_reason"] == bonnie.CACHED
    assert math.isnan(both["block_read"]["seconds"])


def test_each_rate_of_bytes_names_the_directions_of_its_truth():
    directions = {metric: field[4] for metric, field in bonnie.FIELDS.items() if field[4]}
    assert directions == {"block_write": ("write",), "block_rewrite": ("read", "write"), "block_read": ("read",)}
    assert all(bonnie.FIELDS[m][2] == "bytes/s" for m in directions)
    assert not [m for m, f in bonnie.FIELDS.items() if f[2] == "bytes/s" and m not in directions]


def test_flags_map_to_bonnies_options():
    jbod = Layout("jbod", 2, ("/mnt/a", "/mnt/b"), "loop", "two file systems")
    argv = bonnie.Bonnie(file_mib=512, files_k=64).argv(Path("/scratch"), jbod, root=True)
    assert argv[argv.index("-n") + 1] == "64" and "-D" in argv and "-b" not in argv
    assert "-b" in bonnie.Bonnie(sync=True).argv(Path("/scratch"), jbod, root=False)


def test_no_csv_line_and_bad_settings_are_errors():
    with pytest.raises(FlashscaleError, match="no CSV line"):
        bonnie.csv_line("Can't write block.: No space left on device\n")
    with pytest.raises(ConfigError, match="processes"):
        bonnie.Bonnie(processes=(0,))
    assert bonnie.latency_ns("1761us") == pytest.approx(1761e3) and bonnie.latency_ns("2s") == pytest.approx(2e9)
    assert math.isnan(bonnie.latency_ns(""))
