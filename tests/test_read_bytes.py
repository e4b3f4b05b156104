"""One reader of an amount of bytes written as text (``measure.units.read_bytes``): a job file's sizes, the sizes fio
printed, the rates given on the command line, each with its own convention; and on it the one size reader and the
one rate reader of every option and parameter (``read_size``, ``read_rate``): their known values, round trips, and
hostile input refused with one message."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from flashscale.cli.plan import parse_rate
from flashscale.errors import ConfigError
from flashscale.measure.fio_import.normal import block_size
from flashscale.measure.jobrun import size_bytes
from flashscale.measure.units import RATE_FORMS, SIZE_FORMS, rate, read_bytes, read_rate, read_size, size


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


# The one size reader and the one rate reader every option and parameter uses (``read_size``, ``read_rate``).
UNITS = {"": 1, "k": 2**10, "K": 2**10, "KiB": 2**10, "kB": 2**10, "m": 2**20, "M": 2**20, "MiB": 2**20, "G": 2**30,
         "GiB": 2**30, "T": 2**40, "TiB": 2**40}


@pytest.mark.parametrize("text, value", [
    ("4096", 4096), ("4k", 4096), ("4K", 4096), ("4KiB", 4096), ("4kb", 4096), ("1M", 2**20), ("1m", 2**20),
    ("1MiB", 2**20), ("512k", 2**19), ("4 KiB", 4096), (" 1G ", 2**30), ("1.5k", None), ("4k/s", None),
    ("4x", None), ("", None), ("0", None), ("-4k", None), ("8E", None), ("1e3", None),
])
def test_a_size_is_whole_bytes_and_every_prefix_a_power_of_1024(text, value):
    if value is not None:
        assert read_size(text, "--bs") == value
        return
    with pytest.raises(ConfigError) as refused:
        read_size(text, "--bs")
    assert str(refused.value).startswith(f"--bs {text!r} is not a size") and SIZE_FORMS in str(refused.value)


@pytest.mark.parametrize("text, value", [
    ("2.8GB/s", 2.8e9), ("2800MB/s", 2.8e9), ("100Gb/s", 12.5e9), ("3GiB/s", 3 * 2**30), ("400 MBps", 4e8),
])
def test_a_rate_is_decimal_and_a_lower_case_b_a_bit(text, value):
    assert read_rate(text, "--target") == pytest.approx(value, rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 1023), st.sampled_from(sorted(UNITS)))
def test_a_size_written_with_any_unit_reads_back(number, unit):
    assert read_size(f"{number}{unit}") == number * UNITS[unit]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2**50))
def test_a_size_as_flashscale_prints_it_reads_back_as_printed(value):
    """``units.size`` prints a size in its largest binary unit to about three digits ("4 KiB", "100 KiB" for 102,401
    bytes, "1.25 KiB"): a whole number of its unit reads back as that many (the same bytes where the print is exact);
    a fraction, or a number with thousands separated, is for people only, refused as a size (fio's are whole)."""
    printed = size(value)
    number, unit = printed.split()
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    if number.isdigit():
        assert read_size(printed) == int(number) * scale
        assert read_size(printed) == value or value % scale  # exact wherever the bytes are a whole number of it
    else:
        with pytest.raises(ConfigError, match="is not a size"):
            read_size(printed)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e3, 1e13, allow_nan=False), st.sampled_from([("GB/s", 1e9, 1), ("MB/s", 1e6, 1),
                                                                 ("Gb/s", 1e9, 8), ("Mbit/s", 1e6, 8)]))
def test_a_rate_written_with_its_unit_reads_back(bytes_per_s, unit):
    name, scale, bits = unit
    written = f"{bytes_per_s * bits / scale:.6g}{name}"
    assert read_rate(written) == pytest.approx(float(written[:-len(name)]) * scale / bits, rel=1e-12)
    assert read_rate(rate(bytes_per_s).replace(",", "")) == pytest.approx(bytes_per_s, rel=5e-3)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=40), st.integers(-10, 10), st.floats(), st.none(), st.booleans()))
def test_anything_else_is_refused_with_the_one_message_naming_it(given_value):
    for read, forms, noun in ((read_size, SIZE_FORMS, "size"), (read_rate, RATE_FORMS, "rate")):
        try:
            value = read(given_value, "-x")
        except ConfigError as exc:
            assert str(exc).startswith(f"-x {given_value!r} is not a {noun}") and forms in str(exc)
        else:
            assert value > 0 and math.isfinite(value)
            assert read is read_rate or isinstance(value, int)
