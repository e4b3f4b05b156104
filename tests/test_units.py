"""The one formatter of numbers for people (``measure.units``): units, about three significant digits, no e-notation."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from flashscale.measure import units


@pytest.mark.parametrize("value, text", [
    (802.3e6, "802 MB/s"), (1.5e9, "1,500 MB/s"), (12.5e9, "12.5 GB/s"), (1.55e12, "1,550 GB/s"),
    (610.0, "0.000610 MB/s"), (float("nan"), "—"),
])
def test_rate(value, text):
    assert units.rate(value) == text


@pytest.mark.parametrize("value, text", [
    (2**20, "1 MiB"), (4096, "4 KiB"), (1.5 * 2**30, "1.50 GiB"), (512, "512 B"), (2 * 2**40, "2 TiB"),
])
def test_size(value, text):
    assert units.size(value) == text


@pytest.mark.parametrize("value, unit, text", [
    (94_100, "ns", "94.1 µs"), (2.5, "s", "2.50 s"), (1500, "us", "1.50 ms"), (120, "ns", "120 ns"),
])
def test_duration(value, unit, text):
    assert units.duration(value, unit) == text


def test_percent_and_span():
    assert units.percent(0.042) == "4.2%" and units.percent(0.5, 0) == "50%"
    assert units.percent(-0.003, signed=True) == "-0.3%" and units.percent(0.0, signed=True) == "+0.0%"
    assert units.span(144) == "2 min 24 s" and units.span(3900) == "1 h 5 min" and units.span(12) == "12 s"


def test_bounds_never_read_the_same_on_both_sides():
    assert units.bounds(798e6, 806e6) == "798–806"
    assert units.bounds(200.1e6, 200.4e6) == "200.1–200.4"
    assert units.bounds(-4074e6, 7106e6) == "-4,074 to 7,106"


@given(st.floats(min_value=-1e18, max_value=1e18, allow_nan=False))
def test_no_number_is_ever_written_in_e_notation(value):
    for text in (units.number(value), units.rate(abs(value)), units.cell(value, "bandwidth"),
                 units.cell(value, "count"), units.percent(value / 1e16)):
        assert "e+" not in text and "e-" not in text, text


@given(st.floats(min_value=1e-3, max_value=1e15, allow_nan=False))
def test_about_three_significant_digits(value):
    shown = float(units.number(value).replace(",", ""))
    assert math.isclose(shown, value, rel_tol=0.006)


def test_an_interval_of_one_run_says_so_and_none_is_zero_wide():
    nan = float("nan")
    assert units.interval(nan, nan) == "one run: no interval" == units.ONE_RUN
    assert units.with_interval(379e6, nan, nan) == "379 MB/s (one run: no interval)"
    assert units.interval(379e6, 379e6) == "379 MB/s, no spread"  # never "379 MB/s-379 MB/s"
    assert units.interval(798e6, 806e6) == "798–806 MB/s" and units.interval(-0.012, 0.034, "percent") == "-1.2% to 3.4%"
    assert units.with_interval(802e6, 798e6, 806e6) == "802 MB/s (798–806 MB/s)"
