"""Ceilings worked by hand (bytes/s; GB/s = 1e9)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis.prediction.ceilings import (Ceilings, binding_limit, ceiling_table, ceiling_terms, ceilings_for,
    datasheet_vs_measured, measured_peaks, pcie_rate, with_direction_split)
from flashscale.errors import AnalysisError, ConfigError

GB = 1e9

SYSTEM = {
    "device_read_bw_bytes": 3.2e9, "device_write_bw_bytes": 1.3e9, "pcie_gen": 3, "pcie_lanes": 4,
    "network_links": 2, "network_link_bw_bytes": 12.5e9, "memory_bw_bytes": 100e9,
}


@pytest.mark.parametrize("gen, lanes, expected", [
    (1, 1, 250e6),  # 2.5 GT/s x 8/10 / 8
    (2, 8, 4.0e9),  # 8 x 5 GT/s x 8/10 / 8 = 8 x 500 MB/s
    (3, 4, 4 * 8e9 * 128 / 130 / 8),  # 4 x 984.6 MB/s = 3.938 GB/s
    (4, 16, 16 * 16e9 * 128 / 130 / 8),  # 31.5 GB/s
    (5, 4, 4 * 32e9 * 128 / 130 / 8),  # 15.75 GB/s
])
def test_pcie_link_by_hand(gen, lanes, expected):
    assert pcie_rate(gen, lanes) == pytest.approx(expected)


def test_pcie_gen3_x4_in_numbers():
    assert pcie_rate(3, 4) == pytest.approx(3.9385e9, rel=1e-4)
    assert pcie_rate(2, 8, efficiency=0.8) == pytest.approx(3.2e9)  # seed 004's "approximately 3.2 GB/s"


@pytest.mark.parametrize("gen, lanes, word", [(7, 4, "generation 7"), (3, 3, "lane count 3")])
def test_pcie_refuses_unknown_links(gen, lanes, word):
    with pytest.raises(ConfigError, match=word):
        pcie_rate(gen, lanes)


def test_ceilings_for_by_hand():
    # 4 devices reading: device 4 x 3.2 = 12.8 GB/s; PCIe 4 x 3.938 = 15.75 GB/s; network 2 x 12.5 = 25 GB/s;
    # memory 100 GB/s. The smallest, the device datasheet, binds.
    read = ceilings_for(SYSTEM, "read", devices=4)
    assert read == pytest.approx({"device": 12.8e9, "pcie": 4 * pcie_rate(3, 4), "network": 25e9,
                                  "memory": 100e9})
    assert binding_limit(read) == ("device", pytest.approx(12.8e9))
    # 32 devices reading: device 102.4, PCIe 126.0, network 25 -> the network binds
    assert binding_limit(ceilings_for(SYSTEM, "randread", devices=32))[0] == "network"
    assert ceilings_for(SYSTEM, "write", devices=4)["device"] == pytest.approx(5.2e9)  # 4 x 1.3


def test_mixed_rw_holds_each_direction_against_its_own_limit():
    # 4 devices, half the bytes each way (fio's default): reads reach 4 x 3.2 = 12.8 GB/s when the total is 25.6,
    # writes 4 x 1.3 = 5.2 when the total is 10.4 -> the device ceiling of the total is 10.4 GB/s. PCIe is full
    # duplex: 4 x 3.938 each way, 2 x that in total; the network too (2 x 25); memory holds the sum (100).
    mixed = ceilings_for(SYSTEM, "randrw", devices=4)
    assert mixed == pytest.approx({"device": 10.4e9, "pcie": 2 * 4 * pcie_rate(3, 4), "network": 50e9,
                                   "memory": 100e9})
    # a quarter of the bytes read: writes are 3/4 of the total -> 5.2 / 0.75 = 6.93; reads 12.8 / 0.25 = 51.2
    assert ceilings_for(SYSTEM, "rw", devices=4, read_share=0.25)["device"] == pytest.approx(5.2e9 / 0.75)
    # only the read side's device parameter: no device ceiling for a mix that writes
    with pytest.raises(AnalysisError, match="no ceiling applies"):
        binding_limit(ceilings_for({"device_read_bw_bytes": 1e9}, "randrw", devices=1))
    assert ceilings_for({"device_read_bw_bytes": 1e9}, "readwrite", 2, read_share=1.0) == {"device": 2e9}


def test_ceiling_table_reads_the_split_of_a_mixed_row():
    # 6 GB/s read + 2 GB/s write at 4 devices: reads 3/4 of the bytes. Device: min(12.8 / 0.75, 5.2 / 0.25) =
    # 17.07 GB/s, so 8 GB/s is 8 / 17.07 = 46.9% of it; the write part (2 of 5.2 = 38%) is not the closer one.
    rows = pd.DataFrame([dict(devices=4, rw="randrw", best_bw_bytes=8e9, read_bw_bytes=6e9, write_bw_bytes=2e9),
                         dict(devices=4, rw="randrw", best_bw_bytes=8e9)])
    table = ceiling_table(rows, {"device_read_bw_bytes": 3.2e9, "device_write_bw_bytes": 1.3e9})
    assert table.loc[0, "expected_ceiling_bw_bytes"] == pytest.approx(12.8e9 / 0.75)
    assert table.loc[0, "fraction_of_device"] == pytest.approx(6e9 / 12.8e9)  # the read part against reads
    assert table.loc[0, "ceiling_note"] == ""
    assert table.loc[1, "expected_ceiling_bw_bytes"] == pytest.approx(10.4e9)  # no split: 50/50
    assert "50% reads assumed" in table.loc[1, "ceiling_note"]


def test_with_direction_split_takes_the_best_points_means():
    rows = [dict(layout="jbod", devices=2, rw="randrw", bs=4096, numjobs=nj, iodepth=1, rep=rep, bw_bytes=r + w,
                 read_bw_bytes=r, write_bw_bytes=w) for nj, rep, r, w in [(1, 1, 10, 10), (2, 1, 30, 10),
                                                                          (2, 2, 34, 14)]]
    summary = pd.DataFrame([dict(layout="jbod", devices=2, rw="randrw", best_bs=4096, best_numjobs=2,
                                 best_iodepth=1, best_bw_bytes=44.0)])
    split = with_direction_split(summary, pd.DataFrame(rows))
    assert (split.loc[0, "read_bw_bytes"], split.loc[0, "write_bw_bytes"]) == (32, 12)  # (30+34)/2, (10+14)/2
    assert np.isnan(with_direction_split(summary, pd.DataFrame(rows).drop(columns=["read_bw_bytes"])).loc[
        0, "read_bw_bytes"])


@pytest.mark.parametrize("name, value", [("pcie_lanes", 4.5), ("network_links", 1.5), ("pcie_gen", 3.7),
                                         ("network_links", float("inf"))])
def test_fractional_counts_are_refused_by_name(name, value):
    mapping = {"pcie_gen": 3, "pcie_lanes": 4, "network_links": 2, "network_link_bw_bytes": 1e9, name: value}
    with pytest.raises(ConfigError, match=f"{name} = {value!r} must be a whole number"):
        Ceilings.from_mapping(mapping)


def test_devices_is_not_a_ceiling_parameter():  # the device count comes from the results, never the file
    with pytest.raises(ConfigError, match="'devices'"):
        Ceilings.from_mapping({"devices": 2.5})


@pytest.mark.parametrize("mapping, word", [
    ({"disk_bw": 1e9}, "'disk_bw'"),
    ({"device_read_bw_bytes": -1}, "device_read_bw_bytes = -1"),
    ({"device_read_bw_bytes": "fast"}, "'fast' is not a number"),
    ({"pcie_gen": 3}, "pcie_gen and pcie_lanes"),
    ({"network_links": 4}, "network_links needs network_link_bw_bytes"),
    ({"pcie_gen": 3, "pcie_lanes": 4, "pcie_link_bw_bytes": 4e9}, "as pcie_link_bw_bytes or as pcie_gen and pcie_lanes"),
    ({"hosts": 2.5}, "hosts = 2.5 must be a whole number"),
    ({"pcie_gen": 3, "pcie_lanes": 4, "pcie_efficiency": 1.5}, "pcie_efficiency 1.5"),
    (["device_read_bw_bytes"], "got list"),
])
def test_bad_parameters_are_named(mapping, word):
    with pytest.raises(ConfigError, match=word):
        Ceilings.from_mapping(mapping)


def test_from_mapping_coerces_yaml_numbers():
    config = Ceilings.from_mapping({"pcie_gen": "3", "pcie_lanes": 4.0, "memory_bw_bytes": None})
    assert (config.pcie_gen, config.pcie_lanes, config.memory_bw_bytes) == (3, 4, None)
    assert Ceilings.from_mapping(config) is config


def test_ceiling_table_by_hand():
    summary = pd.DataFrame([
        dict(layout="jbod", devices=4, rw="read", best_bw_bytes=12e9, best_bw_bytes_lo=11e9, best_bw_bytes_hi=12.5e9),
        dict(layout="jbod", devices=4, rw="write", best_bw_bytes=5.0e9, best_bw_bytes_lo=4.9e9, best_bw_bytes_hi=5.1e9),
    ])
    before = summary.copy(deep=True)
    table = ceiling_table(summary, SYSTEM).set_index("rw")
    read = table.loc["read"]
    assert read["binding_limit"] == "device"
    assert read["expected_ceiling_bw_bytes"] == pytest.approx(12.8e9)
    assert read["fraction_of_ceiling"] == pytest.approx(12 / 12.8)  # 0.9375
    assert read["fraction_of_ceiling_lo"] == pytest.approx(11 / 12.8)
    assert read["fraction_of_ceiling_hi"] == pytest.approx(12.5 / 12.8)
    assert read["fraction_of_network"] == pytest.approx(12 / 25)
    assert table.loc["write", "fraction_of_ceiling"] == pytest.approx(5.0 / 5.2)
    pd.testing.assert_frame_equal(summary, before)


def test_ceiling_table_without_any_ceiling_for_a_row():
    summary = pd.DataFrame([dict(devices=1, rw="randrw", best_bw_bytes=1e9)])
    row = ceiling_table(summary, {"device_read_bw_bytes": 2e9}).iloc[0]
    assert row["binding_limit"] == "" and np.isnan(row["fraction_of_ceiling"])


def test_ceiling_table_names_missing_columns():
    with pytest.raises(AnalysisError, match="'best_bw_bytes'"):
        ceiling_table(pd.DataFrame([dict(devices=1, rw="read")]), SYSTEM)


def test_datasheet_vs_measured_by_hand():
    datasheet = pd.DataFrame([
        dict(rw="read", bs=4096, metric="iops", datasheet=785e3),
        dict(rw="read", bs=131072, metric="bw_bytes", datasheet=3.2e9),
    ])
    measured = pd.DataFrame([
        dict(rw="read", bs=4096, metric="iops", measured=704e3),
        dict(rw="read", bs=4096, metric="bw_bytes", measured=2.8e9),
        dict(rw="read", bs=131072, metric="bw_bytes", measured=3.3e9),
    ])
    table = datasheet_vs_measured(datasheet, measured).set_index(["bs", "metric"])
    assert table.loc[(4096, "iops"), "ratio"] == pytest.approx(704 / 785)  # 0.8968: 10.3% short
    assert table.loc[(131072, "bw_bytes"), "ratio"] == pytest.approx(3.3 / 3.2)
    assert np.isnan(table.loc[(4096, "bw_bytes"), "datasheet"])  # "NA" in the datasheet
    with pytest.raises(AnalysisError, match="datasheet table lacks column"):
        datasheet_vs_measured(datasheet.drop(columns=["datasheet"]), measured)


def test_measured_peaks_from_results():
    rows = [dict(layout="single", devices=1, rw="randread", bs=4096, numjobs=nj, iodepth=32, rep=1,
                 bw_bytes=iops * 4096, iops=iops) for nj, iops in [(1, 200e3), (4, 700e3)]]
    rows.append(dict(layout="jbod", devices=4, rw="randread", bs=4096, numjobs=4, iodepth=32, rep=1,
                     bw_bytes=2800e3 * 4096, iops=2800e3))  # 4 devices: not a single-device peak
    peaks = measured_peaks(pd.DataFrame(rows)).set_index("metric")
    assert peaks.loc["iops", "measured"] == pytest.approx(700e3)
    assert peaks.loc["bw_bytes", "measured"] == pytest.approx(700e3 * 4096)


def test_one_type_for_a_measurement_and_a_prediction():
    """The ceilings a measured table is held to and the terms a prediction takes are one ``Ceilings``: a PCIe link
    given by its generation and lanes or by its rate, the network's links one per host unless named, the memory
    each host's, worked by hand."""
    by_width = Ceilings(pcie_gen=3, pcie_lanes=4, pcie_efficiency=0.8)
    by_rate = Ceilings(pcie_link_bw_bytes=pcie_rate(3, 4, 0.8))
    assert by_width.pcie_link() == pytest.approx(by_rate.pcie_link()) == pytest.approx(0.8 * 4 * 8e9 * 128 / 130 / 8)
    assert ceilings_for(by_width, "read", 4)["pcie"] == pytest.approx(ceilings_for(by_rate, "read", 4)["pcie"])
    hosts = Ceilings(network_link_bw_bytes=12.5e9, memory_bw_bytes=20e9, hosts=2, cores=8)
    assert ceilings_for(hosts, "write", 4) == pytest.approx({"network": 25e9, "memory": 40e9})  # a link, a memory each
    assert Ceilings(network_link_bw_bytes=12.5e9, network_links=3, hosts=2).network() == pytest.approx(37.5e9)
    terms = ceiling_terms(hosts, "write", 4, 1.0, 1e-9)  # 1 ns of CPU a byte: 1 GB/s a core
    assert (terms["network"], terms["memory"], terms["cpu"]) == pytest.approx((25e9, 40e9, 2 * 8 / 1e-9))
    assert np.isnan(terms["pcie"]) and np.isnan(terms["uplink"]) and hosts.shared() and not by_width.shared()


def test_a_flag_on_top_of_a_file_wins():
    """``with_values``: what a flag gives replaces the file's value; a PCIe rate replaces its generation and lanes;
    a flag not given (None) leaves the file's."""
    file = Ceilings.from_mapping({"pcie_gen": 3, "pcie_lanes": 4, "memory_bw_bytes": 1e10})
    flags = file.with_values(pcie_link_bw_bytes=2e9, memory_bw_bytes=None, cores=4)
    assert (flags.pcie_link(), flags.pcie_gen, flags.memory_bw_bytes, flags.cores) == (2e9, None, 1e10, 4)
    assert file.with_values() == file
