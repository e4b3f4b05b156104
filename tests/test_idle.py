"""The CPUs held out of deep idle while a run measures (system.idle): the kernel's PM QoS request, made and given
back, and refused values named."""
from __future__ import annotations

import struct

import pytest

from flashscale.campaigns import campaign, parameters
from flashscale.errors import ConfigError
from flashscale.measure.sweep import Sweep
from flashscale.system import idle


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True, 2**31])
def test_a_latency_that_is_not_whole_microseconds_is_refused_naming_it(bad):
    with pytest.raises(ConfigError, match=f"cpu_latency_us={bad!r}"):
        Sweep(cpu_latency_us=bad)


def test_the_parameter_is_checked_with_the_others():
    parameters.check({"CPU_LATENCY_US": None}, campaign.PARTS)
    parameters.check({"CPU_LATENCY_US": 10}, campaign.PARTS)
    with pytest.raises(ConfigError, match="CPU_LATENCY_US"):
        parameters.check({"CPU_LATENCY_US": -5}, campaign.PARTS)


def test_the_request_is_written_as_the_kernel_reads_it_and_the_file_closed_after(tmp_path):
    (tmp_path / idle.FILE).write_bytes(b"")
    with idle.held(25, dev=tmp_path) as latency:
        assert latency == 25
        assert struct.unpack("i", (tmp_path / idle.FILE).read_bytes()) == (25,)
    assert idle.enforced(tmp_path) == 25  # a regular file keeps what was written; the kernel's forgets it


def test_where_it_cannot_be_held_the_run_goes_on_saying_so(tmp_path):
    assert "does not exist" in idle.why_not(tmp_path)
    with idle.held(0, dev=tmp_path) as latency:
        assert latency is None
    with idle.held(None, dev=tmp_path) as latency:
        assert latency is None
    assert idle.enforced(tmp_path) is None


@pytest.mark.root
def test_the_kernel_enforces_the_latency_while_held_and_forgets_it_after():
    if idle.why_not() is not None:
        pytest.skip(idle.why_not())
    before = idle.enforced()
    with idle.held(0) as latency:
        assert latency == 0
        assert idle.enforced() == 0
        with idle.held(7):  # a second request does not loosen the first: the smallest holds
            assert idle.enforced() == 0
    assert idle.enforced() == before
    if before == idle.NO_REQUEST_US:  # nobody else on the machine holds one: ours was the only request
        with idle.held(7):
            assert idle.enforced() == 7
        assert idle.enforced() == idle.NO_REQUEST_US
