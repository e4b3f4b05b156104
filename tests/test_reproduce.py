"""``flashscale reproduce``: the agreement of two campaigns' key numbers on synthetic results tables (each rule
of ``compare.agreement`` shown to hold and to fail), the refusals before anything runs, and on the emulated array a
quickstart reproduced as it was (every key number reproduced) and with one device's cap halved (the numbers that
device takes part in differ, named)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from bs4 import BeautifulSoup

from flashscale import cli
from flashscale.analysis import compare
from flashscale.errors import ConfigError
from flashscale.publish import report

sys.path.insert(0, str(Path(__file__).parent))
import reader  # noqa: E402  (tests/reader.py: what a report's reader must never see)

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


def test_overlapping_intervals_beyond_the_margin_are_not_reproduced():
    """5% more with intervals that overlap: the overlap rule called it reproduced; the ratio's interval reaches
    across the 2% margin, so it is undecided."""
    noisy = {**STEADY, "jbod": [190.0, 200.0, 210.0]}
    again = agreed(noisy, {**STEADY, "jbod": [200.0, 210.0, 220.0]})
    jbod = again.loc["jbod read best"]
    assert jbod["difference"] == pytest.approx(0.05)  # 5% more, beyond the 2% margin, inside the noise
    assert jbod["original_hi"] > jbod["reproduction_lo"] and jbod["agrees"] == compare.UNDECIDED
    assert jbod["agreement"].startswith("undecided: +5.0%, but the ratio of the two lies between ")
    assert jbod["agreement"].endswith("across the 2% margin: more runs would tell")
    assert compare.verdict(again.reset_index()).startswith("Not shown to reproduce: ")


def test_100_and_145_mb_s_with_wide_intervals_are_not_reproduced_nor_a_tax_of_0_against_40_percent():
    """The two cases the overlap rule called reproduced: each side a slow run among three, so both intervals are
    wide and overlap; and a tax of 0% against one of 40%, each with a wide interval."""
    original = {**STEADY, "jbod": [130.0, 130.0, 40.0], "btrfs-raid0": [130.0, 130.0, 40.0]}  # 100 MB/s, no tax
    again = {**STEADY, "jbod": [190.0, 185.0, 60.0], "btrfs-raid0": [114.0, 114.0, 33.0]}  # 145 MB/s, a 40% tax
    said = agreed(original, again)
    best = said.loc["jbod read best"]
    assert (best["original"], best["reproduction"]) == (pytest.approx(100 * MB), pytest.approx(145 * MB))
    assert best["original_lo"] < best["reproduction"] < best["original_hi"]  # the intervals overlap
    assert best["agrees"] == compare.UNDECIDED
    tax = said.loc["btrfs-raid0 read tax"]
    assert tax["original"] == pytest.approx(0.0) and tax["reproduction"] == pytest.approx(0.4, abs=0.01)
    assert tax["original_lo"] < tax["reproduction"] < tax["original_hi"] and tax["agrees"] == compare.UNDECIDED
    changed = said[said.index.str.startswith(("jbod", "btrfs-raid0"))]
    assert set(changed["agrees"]) == {compare.UNDECIDED}  # best, efficiency and tax: none reproduced
    assert compare.verdict(said.reset_index()).startswith("Not shown to reproduce: 5 of 8 are undecided: ")


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


def test_one_run_gives_no_interval_and_no_verdict():
    once = {layout: runs[1:2] for layout, runs in STEADY.items()}  # the middle run: 100, 200 and 200 MB/s
    again = agreed(once, {**once, "jbod": [150.0]})
    assert again.loc["jbod read best", "agreement"] == ("not comparable (one run: no interval on a side: no verdict "
                                                        "can be given on a difference of -25.0%)")
    assert again.loc["read baseline", "agrees"] == compare.NOT_COMPARABLE  # the same value, but nothing to judge by
    assert compare.verdict(again.reset_index()).startswith("Not comparable: ")


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


def published(tmp_path: Path, given: dict, backend: str, notebook: str = "quickstart") -> Path:
    """A campaign's report folder as flashscale run leaves it, written by hand: one executed notebook with the
    parameters papermill gave it, and the campaign.json of what it measured, on ``backend``."""
    folder = tmp_path / "reports" / "qs"
    folder.mkdir(parents=True)
    executed = {"cells": [], "metadata": {"papermill": {"parameters": {"CAMPAIGN": "qs", **given}}},
                "nbformat": 4, "nbformat_minor": 5}
    (folder / f"{notebook}.ipynb").write_text(json.dumps(executed))
    data = tmp_path / "data" / "qs"
    data.mkdir(parents=True)
    (data / "campaign.json").write_text(json.dumps({"run_id": "20260101T000000Z", "spec": {"name": "qs"},
                                                    "environment": {"backend": backend}}))
    return folder


def refused(capsys, *argv: str) -> str:
    assert cli.main(["reproduce", *argv]) == 1
    return capsys.readouterr().err


def test_a_path_that_is_not_a_published_campaign_is_refused(tmp_path, capsys):
    assert f"{str(tmp_path / 'nope')!r} does not exist" in refused(capsys, str(tmp_path / "nope"))
    assert "holds no executed notebook" in refused(capsys, str(tmp_path))


@pytest.mark.parametrize("given,backend,named", [
    ({"EMULATION": "directory"}, "loop", "quickstart: the original measured on loop, here it would measure on "
                                         "directory"),
    ({"TESTBED": "/nonexistent/bed.yaml"}, "testbed", "the test bed /nonexistent/bed.yaml, which is not a file here"),
])
def test_a_campaign_this_machine_cannot_run_is_refused_naming_the_difference(tmp_path, capsys, given, backend, named):
    folder = published(tmp_path, {"DATA_DIR": str(tmp_path / "data"), **given}, backend)
    said = refused(capsys, str(folder / "quickstart.ipynb"))  # a report of the campaign names its folder
    assert "cannot reproduce qs on this machine: " in said and named in said and "Nothing was run." in said
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["qs"]  # no reproduction folder
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["qs"]  # nothing measured


def test_a_notebook_missing_from_this_checkout_is_refused(tmp_path, capsys):
    folder = published(tmp_path, {"DATA_DIR": str(tmp_path / "data")}, "directory", notebook="99_nosuch")
    assert "notebook 99_nosuch is not in this checkout" in refused(capsys, str(folder))


@pytest.mark.parametrize("override,named", [
    ("DEVICE=2", "no notebook of qs (quickstart) has a parameter 'DEVICE' (did you mean 'DEVICES'?)"),
    ("CAP_READ_BPS=-1", "CAP_READ_BPS"),  # 0 is uncapped; below it, nothing
])
def test_a_bad_override_is_refused_before_anything_runs(tmp_path, capsys, override, named):
    folder = published(tmp_path, {"DATA_DIR": str(tmp_path / "data"), "EMULATION": "directory"}, "directory")
    assert named in refused(capsys, str(folder), "-p", override)
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["qs"]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["qs"]


# The smallest quickstart that still has a baseline, an array of 2 devices to cap one of and a tax: read only, 2 jobs
# (one a device on jbod), 2 runs a point (the least that gives an interval), 2 s runs.
# Three runs a point: with two, a t interval is 6.4 x their difference either side (t = 12.7), so two btrfs-raid0
# reads 4% apart (a clean run: 148-261 MB/s) made a number "not comparable"; with three, t = 4.3
# 3 s without a ramp, not 2 s after one (the same 3 s a run): reads after a ramp came out up to 2% above the cap, the
# throttle's first slice, which gives no rate (measure.truth); without one, within 1% (a quickstart: 0.995-1.010)
TINY = dict(DEVICES=2, RW=["read"], NUMJOBS=[2], REPETITIONS=3, RUNTIME_S=3, RAMP_S=0, FILE_SIZE=32 * 2**20,
            DEVICE_SIZE=2**30, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000, PROGRESS=False)
# What device 2 takes part in: jbod and btrfs-raid0 (single is device 1); the reference jbod has no tax of its own.
ON_DEVICE_2 = {"jbod read best", "jbod read efficiency", "btrfs-raid0 read best", "btrfs-raid0 read efficiency",
               "btrfs-raid0 read tax"}


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_a_quickstart_reproduces_and_a_halved_cap_is_caught(tmp_path, capsys):
    campaign = tmp_path / "qs.yaml"
    campaign.write_text(yaml.safe_dump({"campaign": "qs", "notebooks": ["quickstart"],
                                        "parameters": {**TINY, "DATA_DIR": str(tmp_path / "data")}}))
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / "reports")]) == 0
    assert cli.main(["reproduce", str(tmp_path / "reports" / "qs")]) == 0
    again = tmp_path / "reports" / "qs-reproduced"
    numbers = report.read_record(again / "reproduction.ipynb")
    # by the one rule, a number is reproduced when the interval of the ratio of the two lies within the 2% margin:
    # the capped single device and jbod repeat within 0.5% and reproduce; btrfs-raid0's reads spread about 2% over
    # three runs, so its numbers may be undecided (a clean run: -1.8%, the ratio 0.934-1.03), never "differs"
    assert numbers["key_numbers"] == 8 and numbers["differ"] == 0, numbers["numbers"]
    steady = {"read baseline", "single read best", "single read efficiency", "jbod read best", "jbod read efficiency"}
    assert {numbers["numbers"][label]["agrees"] for label in steady} == {"reproduced"}, numbers["numbers"]
    assert {n["agrees"] for n in numbers["numbers"].values()} <= {"reproduced", "undecided"}
    assert numbers["verdict"] == "Reproduced: all 8 key numbers agree." or numbers["verdict"].startswith(
        "Not shown to reproduce: ")
    assert capsys.readouterr().out.splitlines()[-1] == numbers["verdict"]
    assert yaml.safe_load((again / "qs-reproduced.yaml").read_text())["notebook_parameters"]["quickstart"] == \
        {**TINY, "DATA_DIR": str(tmp_path / "data")}  # the same notebook, the same parameters
    text = BeautifulSoup((again / "reproduction.html").read_text(), "html.parser").get_text()
    assert numbers["verdict"] in text and reader.text_problems(text) == []
    assert 'href="reproduction.html"' in (again / "index.html").read_text()

    assert cli.main(["reproduce", str(tmp_path / "reports" / "qs"), "--reports", str(tmp_path / "halved"),
                     "-p", "CAP_SCALE=[1, 0.5]"]) == 0
    halved = report.read_record(tmp_path / "halved" / "qs-reproduced" / "reproduction.ipynb")
    said = {label: number["agreement"] for label, number in halved["numbers"].items()}
    assert {label for label, number in halved["numbers"].items() if number["agrees"] == "differs"} == ON_DEVICE_2
    assert {said[label] for label in set(said) - ON_DEVICE_2} == {"reproduced"}  # the baseline and single
    # jbod: one device at the cap, one at half, 3/4 of the bandwidth; btrfs-raid0 stripes at its slowest member's
    assert halved["numbers"]["jbod read best"]["difference"] == pytest.approx(-0.25, abs=0.03)
    assert halved["numbers"]["btrfs-raid0 read best"]["difference"] == pytest.approx(-0.5, abs=0.05)
    assert halved["verdict"].startswith("Not reproduced: 5 of 8 key numbers differ beyond the noise: ")
    assert all(label in halved["verdict"] for label in ON_DEVICE_2)
    text = BeautifulSoup((tmp_path / "halved" / "qs-reproduced" / "reproduction.html").read_text(),
                         "html.parser").get_text()
    assert "The reproduction ran differently: array.cap_scale" in text and reader.text_problems(text) == []
