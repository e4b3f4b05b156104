"""``flashscale reproduce``: the agreement of two campaigns' key numbers on synthetic results tables (each rule
of ``compare.agreement`` shown to hold and to fail), the refusals before anything runs, and on the emulated array a
quickstart reproduced as it was (every key number reproduced) and with one device's cap halved (the numbers that
device takes part in differ, named)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from flashscale import cli
from flashscale.analysis import compare
from flashscale.errors import ConfigError

MB = 1e6


def results(bw: dict[str, list[float]], rw: str = "read") -> pd.DataFrame:
    """A results table: per layout (single on 1 device, the others on 2) one point, its runs' MB/s as given."""
    rows = [{"layout": layout, "devices": 1 if layout == "single" else 2, "rw": rw, "bs": 1048576, "numjobs": 2,
             "iodepth": 1, "rep": rep, "bw_bytes": mbs * MB}
            for layout, runs in bw.items() for rep, mbs in enumerate(runs)]
    return pd.DataFrame(rows)


STEADY = {"single": [99.9, 100.0, 100.1], "jbod": [199.8, 200.0, 200.2], "btrfs-raid0": [199.7, 200.0, 200.3]}


def agreed(original: dict, reproduction: dict, margin: float = 0.02) -> pd.DataFrame:
    keys = [compare.key_numbers(results(bw), "jbod", margin=margin) for bw in (original, reproduction)]
    return compare.agreement(*keys, margin).set_index("label")


def test_key_numbers_are_the_baseline_best_efficiency_and_tax_with_their_intervals():
    keys = compare.key_numbers(results(STEADY), "jbod").set_index(["layout", "number"])
    assert set(compare.label(r) for r in keys.reset_index().to_dict("records")) == {
        "read baseline", "single read best", "single read efficiency", "jbod read best", "jbod read efficiency",
        "btrfs-raid0 read best", "btrfs-raid0 read efficiency", "btrfs-raid0 read tax"}  # no tax of the reference
    assert keys.loc[("", "baseline"), "value"] == pytest.approx(100 * MB)
    assert keys.loc[("jbod", "efficiency"), "value"] == pytest.approx(1.0)
    jbod = keys.loc[("jbod", "best")]
    assert jbod["lo"] < jbod["value"] < jbod["hi"] and jbod["unit"] == "bytes/s"
    assert keys.loc[("btrfs-raid0", "tax"), "unit"] == "fraction"


def test_the_same_numbers_again_are_reproduced():
    again = agreed(STEADY, {layout: [v * 1.001 for v in runs] for layout, runs in STEADY.items()})
    assert set(again["agreement"]) == {"reproduced"}
    assert compare.verdict(again.reset_index()) == f"Reproduced: all {len(again)} key numbers agree."


def test_overlapping_intervals_are_reproduced_beyond_the_margin():
    noisy = {**STEADY, "jbod": [190.0, 200.0, 210.0]}
    again = agreed(noisy, {**STEADY, "jbod": [200.0, 210.0, 220.0]})
    jbod = again.loc["jbod read best"]
    assert jbod["difference"] == pytest.approx(0.05)  # 5% more, beyond the 2% margin, but inside the noise
    assert jbod["original_hi"] > jbod["reproduction_lo"] and jbod["agreement"] == "reproduced"


def test_disjoint_intervals_beyond_the_margin_differ_by_the_percentage():
    again = agreed(STEADY, {**STEADY, "jbod": [v / 2 for v in STEADY["jbod"]]})
    assert again.loc["jbod read best", "agreement"] == "differs beyond the noise by -50.0%"
    assert again.loc["jbod read efficiency", "agreement"] == "differs beyond the noise by -50.0%"
    assert again.loc["read baseline", "agreement"] == "reproduced"
    # btrfs-raid0 measured the same, but its tax is against jbod: from 0 to -100% (a gain), in points
    tax = again.loc["btrfs-raid0 read tax"]
    assert tax["difference"] == pytest.approx(-1.0, abs=0.01) and "percentage points" in tax["agreement"]
    assert compare.verdict(again.reset_index()).startswith(
        "Not reproduced: 3 of 8 key numbers differ beyond the noise: jbod read best -50.0%, jbod read efficiency "
        "-50.0%, btrfs-raid0 read tax")


def test_disjoint_intervals_within_the_margin_are_reproduced():
    tighter = {**STEADY, "jbod": [v * 1.01 for v in STEADY["jbod"]]}  # 1% more: the intervals are 0.1% wide
    assert agreed(STEADY, tighter).loc["jbod read best", "agreement"] == "reproduced"
    # the same numbers against a margin of 0.5% differ
    assert agreed(STEADY, tighter, margin=0.005).loc["jbod read best", "agreement"] == \
        "differs beyond the noise by +1.0%"


def test_a_number_on_one_side_only_is_not_comparable_and_says_why():
    again = agreed(STEADY, {k: v for k, v in STEADY.items() if k != "btrfs-raid0"})
    assert again.loc["btrfs-raid0 read best", "agreement"] == "not comparable (not measured in the reproduction)"
    assert again.loc["btrfs-raid0 read tax", "agrees"] == compare.NOT_COMPARABLE
    said = compare.verdict(again.reset_index())
    assert said.startswith("Reproduced where comparable: 5 of 8 key numbers agree. 3 of 8 are not comparable: "
                           "btrfs-raid0 read best (not measured in the reproduction)")


def test_one_run_gives_no_interval_to_tell_a_difference_from_noise():
    once = {layout: runs[1:2] for layout, runs in STEADY.items()}  # the middle run: 100, 200 and 200 MB/s
    again = agreed(once, {**once, "jbod": [150.0]})
    assert again.loc["jbod read best", "agreement"] == ("not comparable (one run on a side: no interval to tell a "
                                                        "difference of -25.0% from noise)")
    assert again.loc["read baseline", "agreement"] == "reproduced"  # the same value needs no interval


def test_a_bad_margin_is_refused_naming_it():
    keys = compare.key_numbers(results(STEADY), "jbod")
    with pytest.raises(ConfigError, match="tax margin 2 "):
        compare.agreement(keys, keys, 2)


def test_the_record_holds_the_verdict_and_every_number():
    again = agreed(STEADY, {**STEADY, "jbod": [v / 2 for v in STEADY["jbod"]]}).reset_index()
    numbers = compare.agreement_record(again)
    json.dumps(numbers, allow_nan=False)  # plain JSON
    assert numbers["differ"] == 3 and numbers["reproduced"] == 5 and numbers["key_numbers"] == 8
    assert numbers["numbers"]["jbod read best"]["difference"] == pytest.approx(-0.5)
    assert numbers["headline"] == {"reproduction": numbers["verdict"]}
