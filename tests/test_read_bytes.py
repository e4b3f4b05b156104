"""One reader of an amount of bytes written as text (``measure.units.read_bytes``): a job file's sizes, the sizes fio
printed, the rates given on the command line, each with its own convention."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from flashscale.cli.plan import parse_rate
from flashscale.errors import ConfigError
from flashscale.measure.fio_import.normal import block_size
from flashscale.measure.jobrun import size_bytes
from flashscale.measure.units import read_bytes


@pytest.mark.parametrize("text, options, expected", [
    ("4096", {}, 4096), ("4k", {}, 4000), ("4k", {"k1024": True}, 4096), ("64KiB", {}, 65536),
    ("71.4MiB", {}, 71.4 * 2**20), ("3390MB", {}, 3.39e9), ("203360KB", {"k1024": True}, 203360 * 1024),
    ("12.5GB/s", {"per_second": True}, 12.5e9), ("100Gb/s", {"per_second": True, "bits": True}, 12.5e9),
    ("100Gbps", {"per_second": True, "bits": True}, 12.5e9), ("4kb", {"k1024": True}, 4096),
    ("3GiB/s", {"per_second": True}, 3 * 2**30), ("1EB", {}, 1e18),
])
def test_each_convention_reads_its_own_way(text, options, expected):
    assert read_bytes(text, **options) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text, options", [
    ("", {}), ("k", {}), ("4iB", {}), ("4 GB/s", {}), ("12.5", {"unit": True}), ("1.5k", {"whole": True}),
    ("1e3", {"whole": True}), ("-4k", {}), ("4x", {}), ("9" * 21, {}), ("1e999", {}), ("4 k i B", {}),
])
def test_what_is_not_an_amount_is_none(text, options):
    assert read_bytes(text, **options) is None


def test_each_caller_keeps_its_convention_and_names_the_bad_value():
    assert size_bytes("64KiB") == 65536 and size_bytes("4k-64k") == 4096 and size_bytes("1M") == 2**20
    assert parse_rate("100Gb/s", "--link-bps") == pytest.approx(12.5e9, rel=1e-12)
    assert block_size("(R) 64.0KiB-64.0KiB, (W) 4096B-4096B", "write") == 4096
    assert block_size("4K-4K/64K-64K", "write") == 65536
    with pytest.raises(ConfigError, match="'1.5k'"):
        size_bytes("1.5k")
    with pytest.raises(ConfigError, match="8E"):
        size_bytes("8E")  # 2^63 bytes: more than fio counts
    with pytest.raises(ConfigError, match="--target '800'"):
        parse_rate("800", "--target")
    with pytest.raises(ConfigError, match="above 0"):
        parse_rate("0GB/s", "--target")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.booleans(), st.booleans(), st.booleans())
def test_any_text_is_an_amount_or_none_never_an_error_nor_a_negative_or_infinite_number(text, k1024, bits, rate):
    value = read_bytes(text, k1024=k1024, bits=bits, per_second=rate)
    assert value is None or (math.isfinite(value) and value >= 0)
