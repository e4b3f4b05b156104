"""Tables for people (``publish.tables``): units in the cells, intervals in brackets, words for headers, no index,
the reference marked, and never an e-notation, for any number (hypothesis)."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup
from hypothesis import given, strategies as st

from flashscale.publish import tables

E_NOTATION = re.compile(r"\d[eE][+-]?\d")
SUMMARY = pd.DataFrame({
    "layout": ["single", "jbod", "btrfs-raid0"], "devices": [1, 4, 4], "rw": ["write"] * 3,
    "best_bw_bytes": [2.011925e8, 8.02e8, 7.98e8], "best_bw_bytes_lo": [1.99e8, 7.98e8, 7.9e8],
    "best_bw_bytes_hi": [2.03e8, 8.06e8, 8.01e8],
    "efficiency": [1.0, 0.997, 0.99], "efficiency_lo": [np.nan, 0.99, 0.98], "efficiency_hi": [np.nan, 1.0, 1.001],
    "tax": [np.nan, 0.0, 0.003], "tax_lo": [np.nan, 0.0, -0.011], "tax_hi": [np.nan, 0.0, 0.005],
    "tax_verdict": ["unknown", "reference", "equivalent"], "tax_reps_needed": [np.nan, np.nan, 15.0],
    "bs": [1048576, 4096, 1536], "clat_p99_ns": [12345.0, 2.3e6, 800.0], "ok": [True, False, True],
}, index=[7, 8, 9])


def test_a_summary_reads_as_a_storage_engineer_writes_it():
    text = tables.formatted(SUMMARY, reference="jbod")
    assert list(text.columns[:6]) == ["layout", "devices", "I/O", "best", "efficiency", "tax"]
    assert "best_bw_bytes_lo" not in text.columns and "efficiency hi" not in text.columns  # bounds go with values
    row = text.iloc[1]
    assert row["layout"] == "jbod (reference)"
    assert row["best"] == "802 MB/s (798–806)"
    assert row["efficiency"] == "99.7% (99.0–100.0%)"
    assert text.iloc[2]["tax"] == "0.3% (-1.1 to 0.5%)"  # a negative bound: "to", not a dash
    assert text.iloc[1]["tax"] == "0%"  # the reference against itself: no interval to show
    assert list(text["block size"]) == ["1 MiB", "4 KiB", "1.50 KiB"]
    assert list(text["p99 latency"]) == ["12.3 µs", "2.30 ms", "800 ns"]
    assert list(text["runs a side to decide"]) == ["—", "—", "15"]
    assert list(text["ok"]) == ["yes", "no", "yes"]
    assert list(text.index) == [0, 1, 2]


def test_the_published_html_has_no_index_column_and_the_reference_row_in_bold():
    html = tables.show(SUMMARY, ["layout", "best_bw_bytes", "tax"], reference="jbod").to_html()
    soup = BeautifulSoup(html, "html.parser")
    assert [th.text for th in soup.find("thead").find_all("th")] == ["layout", "best", "tax"]
    assert all(len(tr.find_all("th")) == 0 for tr in soup.find("tbody").find_all("tr"))  # no index cells
    bold = re.findall(r"#(T_\w+_row(\d)_col\d)[^{]*\{\s*font-weight: bold", html)
    assert {row for _, row in bold} == {"1"}


def test_gb_per_second_from_ten_gb_per_second_and_a_pivot_keeps_its_kinds():
    big = pd.DataFrame({"rw": ["read", "write"], "best_bw_bytes": [1.32e11, 1.21e11]})
    assert list(tables.formatted(big)["best"]) == ["132 GB/s", "121 GB/s"]
    long = pd.DataFrame({"metric": ["bw_bytes", "iops"], "rw": ["read", "read"], "measured": [3.3e9, 704000.0],
                         "ratio": [1.03125, 0.8968]})
    wide = long.pivot_table(index="metric", columns="rw", values=["measured", "ratio"])
    text = tables.formatted(wide, row_kind="metric")
    assert list(text["measured read"]) == ["3,300 MB/s", "704,000"]
    assert list(text["ratio read"]) == ["1.03", "0.897"]


def test_a_column_that_is_not_there_is_named():
    with pytest.raises(KeyError, match="no column \\['bw'\\]"):
        tables.formatted(SUMMARY, ["layout", "bw"])
    with pytest.raises(ValueError, match="kind 'furlongs'"):
        tables.formatted(SUMMARY, kinds={"tax": "furlongs"})


numbers = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(value=numbers, kind=st.sampled_from([k for k in tables.KINDS if k != "text"]))
def test_no_number_is_ever_written_in_e_notation(value, kind):
    text = tables.cell(value, kind)
    assert not E_NOTATION.search(text), text
    if math.isfinite(value) and kind == "number" and abs(value) >= 1e-5:
        assert float(text.replace(",", "")) == pytest.approx(value, rel=5e-3, abs=5e-3)


@given(st.lists(st.floats(min_value=-1e15, max_value=1e15), min_size=1, max_size=6))
def test_any_frame_of_numbers_is_published_without_e_notation(values):
    frame = pd.DataFrame({"best_bw_bytes": values, "tax": values, "bs": [abs(v) for v in values], "x": values})
    html = tables.show(frame).to_html()
    cells = [td.text for td in BeautifulSoup(html, "html.parser").find_all("td")]
    assert not [c for c in cells if E_NOTATION.search(c)]


def test_an_empty_table_keeps_its_headers():
    empty = SUMMARY.iloc[:0]
    soup = BeautifulSoup(tables.show(empty, ["layout", "best_bw_bytes"]).to_html(), "html.parser")
    assert [th.text for th in soup.find("thead").find_all("th")] == ["layout", "best"]
    assert soup.find("tbody").find_all("td") == []


def test_a_value_of_one_run_says_it_has_no_interval_instead_of_a_zero_wide_one():
    frame = pd.DataFrame({"layout": ["jbod", "raid0"], "best_bw_bytes": [379e6, 402e6],
                          "best_bw_bytes_lo": [np.nan, 398e6], "best_bw_bytes_hi": [np.nan, 406e6]})
    shown = tables.formatted(frame)
    assert shown["best"].tolist() == ["379 MB/s (one run: no interval)", "402 MB/s (398–406)"]
