"""Facts before guesses, and bounds where the data cannot pin a number (issue 41): the layout's own stripe unit or
its tool's default, said; a request no larger than the least chunk possible on one member; every prediction an
interval whose ends come from what is unknown."""
from __future__ import annotations

import pandas as pd
import pytest

from flashscale.analysis.prediction import predict

KiB = 1024


def _random_reads() -> pd.DataFrame:
    """A device measured at 4 KiB random reads, 1 job, iodepth 1, 4 and 16: 27, 100 and 300 MB/s, 3 runs each."""
    rows = [dict(layout="single", devices=1, rw="randread", bs=4 * KiB, numjobs=1, iodepth=depth, rep=rep,
                 bw_bytes=bw * (1 + 0.01 * (rep - 1)), lat_mean_ns=lat)
            for depth, bw, lat in ((1, 27e6, 151e3), (4, 100e6, 163e3), (16, 300e6, 218e3)) for rep in range(3)]
    return pd.DataFrame(rows)


def test_a_4k_random_read_on_md_raid0_with_no_chunk_reaches_one_member():
    """The issue's case: 3-device md RAID-0, no chunk in the table, 4 KiB random read at 1 job and iodepth 1: one
    member's rate at one in flight (27 MB/s), not 3 x (81 MB/s); the note says md's default chunk was taken."""
    base = predict.curve(_random_reads())
    got = predict.predict(base, "md-raid0", [dict(devices=3, rw="randread", bs=4 * KiB, numjobs=1, iodepth=1)]).iloc[0]
    assert got["predicted_bw_bytes"] == pytest.approx(27e6, rel=1e-9)  # the single device's mean at 1 in flight
    assert got["routing"] == "at random" and got["members_per_request"] == 1
    assert "md's default chunk (mdadm 3.1 and later) 512 KiB taken: no chunk given" in got["predicted_note"]
    unknown = predict.predict(base, "xvm", [dict(devices=3, rw="randread", bs=4 * KiB, numjobs=1, iodepth=1)]).iloc[0]
    assert unknown["predicted_bw_bytes"] == pytest.approx(27e6, rel=1e-9)  # no default, the same fact
    assert "reaches one member whatever the chunk" in unknown["predicted_note"]
