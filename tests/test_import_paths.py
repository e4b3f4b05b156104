"""An imported study's report names its source files from the folder imported on (issue 52, left over): the notes,
the sources table and the section "How this was made" never print where on the importer's machine they were."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flashscale.measure.fio_import import importer
from flashscale.measure.fio_import.file_names import Naming
from flashscale.publish import report

GOLDEN = Path(__file__).parent / "golden"
PRIVATE = "someone-s-home-7f3a"  # a folder above the one imported: it must appear nowhere a report prints


@pytest.fixture
def imported(tmp_path) -> tuple[Path, Path]:
    """A user's folder under a private path: a good run in a subfolder, a truncated file (refused: its reason names
    it), and a file whose name says another rw than its content (said)."""
    results = tmp_path / PRIVATE / "bench" / "results"
    (results / "day1").mkdir(parents=True)
    shutil.copy(GOLDEN / "write_1target.json", results / "day1" / "write-qd1.json")
    text = (GOLDEN / "randrw_mixed.json").read_text()
    (results / "truncated.json").write_text(text[: len(text) // 2])
    shutil.copy(GOLDEN / "imported" / "fio333_groups.json", results / "randread-qd1.json")
    out = tmp_path / "imported"
    importer.run_import([str(results)], out, Naming(pattern="{rw}-qd{iodepth}.json", given={"layout": "single",
                                                                                            "devices": 1}))
    return out, results


def test_the_report_s_notes_name_the_folder_imported_not_the_folders_above_it(imported):
    out, results = imported
    notes = importer.stored(out).notes
    assert notes[0].startswith("Imported, not measured by flashscale: 3 rows from 2 files of fio's output under "
                               "results/ (json; fio-3.33")
    assert any("truncated.json" in note for note in notes)  # the refusal is there, its path is not
    assert PRIVATE not in " ".join(notes) and str(results.parent) not in " ".join(notes)


def test_the_sources_table_says_each_path_from_the_folder_imported(imported):
    out, results = imported
    shown = importer.report_sources(out)
    assert sorted(shown["path"]) == ["results/day1/write-qd1.json", "results/randread-qd1.json",
                                    "results/truncated.json"]
    assert PRIVATE not in shown.to_csv()
    assert str(results) in importer.sources(out).to_csv()  # the record keeps the paths as they were read


def test_how_it_was_made_names_no_path_of_the_importer(imported):
    out, _ = imported
    assert PRIVATE not in report.how_made(out)


@pytest.mark.parametrize("root, text, said", [
    ("/home/u/results", "/home/u/results/a/b.json: truncated", "results/a/b.json: truncated"),
    ("/tmp", "/tmp/x.json", "tmp/x.json"),
    ("", "/home/u/x.json", "/home/u/x.json"),
])
def test_relative_says_a_path_from_the_folder_s_own_name(root, text, said):
    assert importer.relative(text, root) == said
