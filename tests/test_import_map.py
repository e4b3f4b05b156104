"""What a file does not say, said by the user per output and per group (``--map`` entries matching ``output: N`` and
``job: GLOB`` beside the path glob), and what fio's numbers imply where it echoes no options, said as derived; on
real fio output: 30 runs of fio 3.33 appended to one file, fio 2.1.4's four reporting groups built from its tag."""
from __future__ import annotations

import lzma
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from flashscale import cli
from flashscale.errors import ConfigError
from flashscale.measure.fio_import import importer
from flashscale.measure import results
from flashscale.measure.fio_import.file_names import Naming, compile_pattern, read_map

IMPORTED = Path(__file__).parent / "golden" / "imported"
APPENDED = IMPORTED / "fio333_appended30.json.xz"
FIO_2_1_4_GROUPS = IMPORTED / "built" / "fio-2.1.4" / "groups_json.out.xz"


def _map(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "map.yaml"
    path.write_text(text)
    return path


def test_thirty_appended_outputs_take_thirty_device_counts(tmp_path, capsys):
    """``fio ... >> all.json`` once per device count, 1 to 30: an ``output: N`` entry gives each its count; without
    them the 30 runs are repetitions of one point."""
    mapping = _map(tmp_path, "".join(f"- {{output: {n}, devices: {n + 1}}}\n" for n in range(30)))
    out = tmp_path / "counts"
    assert cli.main(["import", str(APPENDED), "--to", str(out), "--map", str(mapping), "--layout", "jbod"]) == 0
    assert "30 fio outputs in one file: 30 runs" in capsys.readouterr().err
    table = results.load(out)
    assert len(table) == 30 and (table["status"] == "ok").all()
    assert sorted(zip(table["source_output"], table["devices"])) == [(n, n + 1) for n in range(30)]
    assert (table["rep"] == 0).all() and (table["rw"] == "read").all() and (table["bs"] == 2**20).all()
    plain = tmp_path / "plain"
    assert cli.main(["import", str(APPENDED), "--to", str(plain), "--layout", "jbod", "--devices", "1"]) == 0
    assert sorted(results.load(plain)["rep"]) == list(range(30))


def test_an_output_entry_comes_before_a_path_entry_and_each_field_comes_from_the_first_that_gives_it(tmp_path):
    mapping = _map(tmp_path, "- {output: 2, devices: 8}\n- {match: '*', layout: md0, devices: 1, rw: write}\n")
    out = tmp_path / "out"
    importer.run_import([str(APPENDED)], out, Naming(rules=tuple(read_map(mapping))))
    table = results.load(out).set_index("source_output")
    assert table.loc[2, "devices"] == 8 and (table.drop(index=2)["devices"] == 1).all()
    assert (table["layout"] == "md0").all()
    assert (table["rw"] == "read").all()  # the file says read: a name's rw never overrides what fio echoed


def _groups(tmp_path: Path) -> Path:
    """fio 2.1.4's own JSON of four reporting groups (built/run.py's groups job), as a user keeps it."""
    path = tmp_path / "groups.json"
    path.write_bytes(lzma.decompress(FIO_2_1_4_GROUPS.read_bytes()))
    return path


def test_fio_2_1_4_s_four_groups_take_four_rw_values_and_what_its_numbers_imply(tmp_path, capsys):
    """fio 2.1.4 echoes no options: each group's direction comes from the side that moved data, its bs from bytes
    over I/Os, its iodepth from iodepth_level (the null engine completes each I/O as it is submitted: 1 in flight,
    whatever the job asked), numjobs from the job entries; random or sequential from the map's ``job:`` entries."""
    source = _groups(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["import", str(source), "--to", str(out), "--layout", "null", "--devices", "1"]) == 3
    assert "which way it moved data (read), not whether at random or in sequence" in capsys.readouterr().err
    mapping = _map(tmp_path, "- {job: 'rand*', rw: random}\n- {job: '*', rw: sequential}\n"
                             "- {job: write, numjobs: 1}\n- {job: read, numjobs: 1}\n")
    assert cli.main(["import", str(source), "--to", str(out), "--map", str(mapping), "--layout", "null",
                     "--devices", "1"]) == 0
    table = results.load(out).sort_values("source_group")
    assert table[["rw", "bs", "numjobs", "iodepth"]].values.tolist() == [
        ["randread", 4096, 2, 1], ["write", 65536, 1, 1], ["randwrite", 16384, 3, 1], ["read", 1048576, 1, 1]]
    for words in ("rw: derived: the direction from the sides that moved data", "bs: derived: ",
                  "iodepth: derived: iodepth_level's bucket 1 holds the most I/Os", "numjobs: job entries counted"):
        assert table["read_from"].str.contains(words, regex=False).any(), words
    assert (table["fio_version"] == "fio-2.1.4").all()


def test_a_whole_rw_the_file_s_numbers_contradict_is_kept_and_the_difference_said(tmp_path, capsys):
    """A direction fio's numbers imply is derived, as bs and iodepth are: the user's whole rw stays (under
    unified_rw_reporting all I/O lands on one side, which terse cannot tell from a read-only job)."""
    mapping = _map(tmp_path, "- {job: randread, rw: randrw}\n- {job: 'rand*', rw: random}\n"
                             "- {job: '*', rw: sequential, numjobs: 1}\n")
    out = tmp_path / "out"
    assert cli.main(["import", str(_groups(tmp_path)), "--to", str(out), "--map", str(mapping), "--layout", "x",
                     "--devices", "1"]) == 0
    assert "the name says rw=randrw, the file's numbers moved data read only: the name's is kept" in \
        capsys.readouterr().err
    assert results.load(out).sort_values("source_group")["rw"].iloc[0] == "randrw"


@pytest.mark.parametrize("text, words", [
    ("- {layout: x}\n", "needs 'match' (a glob of paths), 'output'"),
    ("- {output: -1, layout: x}\n", "output=-1 must be a whole number from 0"),
    ("- {output: true, layout: x}\n", "output=True must be a whole number"),
    ("- {job: 3, layout: x}\n", "job=3 must be a glob"),
    ("- {job: x, rw: [1]}\n", "rw=[1] must be a plain name"),
])
def test_a_map_entry_that_cannot_be_read_is_named(tmp_path, text, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read_map(_map(tmp_path, text))


@given(st.lists(st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_+"),
                        min_size=1, max_size=12), min_size=6, max_size=6))
def test_a_pattern_reads_back_every_name_made_from_it(values):
    """A name made by a pattern's fields (as fio-plot's bench-fio makes them) is read back field for field."""
    layout, bs, rep, rw, iodepth, numjobs = values
    pattern = compile_pattern("{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json")
    path = f"/data/{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json"
    assert pattern.search(path).groupdict() == dict(layout=layout, bs=bs, rep=rep, rw=rw, iodepth=iodepth,
                                                    numjobs=numjobs)
    assert pattern.search(path.removesuffix(".json") + ".jsox") is None


def test_a_file_name_crafted_against_a_pattern_is_read_in_one_pass():
    """254 characters of '-' (or 'a-' repeated) against four fields separated by '-': a backtracking regular
    expression tried every split (3.1 s a file here); one pass finds there is none. make bench times it."""
    pattern = compile_pattern("{layout}/{bs}/{rw}-{iodepth}-{numjobs}-{rep}.json")
    for name in ("-" * 250 + ".jsox", "a-" * 125 + ".jsox", "-" * 250 + ".json"):
        assert pattern.search(f"x/y/{name}") is None or all(pattern.search(f"x/y/{name}").groupdict().values())
