"""Resuming a layout cut short runs its workloads again, whole: their earlier rows are set aside, never doubled."""
from __future__ import annotations

import json

from flashscale.measure import campaign_folder
from flashscale.measure import results, resume


def row(layout: str, phase: str, point: str, rep: int = 0) -> dict:
    return {"layout": layout, "phase": phase, "point": point, "rep": rep, "raw_dir": f"raw/{layout}/{point}/rep{rep}"}


def test_workload_rows_of_an_unfinished_layout_are_set_aside_with_their_raw_folders(tmp_path):
    rows = [row("single", "measure", "read-nj1"), row("single", "workload", "jobfile-qd1"),
            row("jbod", "measure", "read-nj1"), row("jbod", "workload", "jobfile-qd1"),
            row("jbod", "workload", "jobfile-qd1", rep=1)]
    (tmp_path / campaign_folder.ROWS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    for r in rows:
        (tmp_path / r["raw_dir"]).mkdir(parents=True)
    said = resume.set_aside_workloads(tmp_path, frozenset({"single"}))
    kept, _ = campaign_folder.read_rows(tmp_path)
    assert kept == rows[:3]
    aside = [json.loads(line) for line in (tmp_path / campaign_folder.SET_ASIDE_FILE).read_text().splitlines()]
    assert aside == rows[3:] and said.startswith("2 workload row(s)")
    assert not (tmp_path / "raw/jbod/jobfile-qd1/rep0").exists()
    assert (tmp_path / "raw/jbod/jobfile-qd1/rep0.set-aside").is_dir()
    assert (tmp_path / "raw/single/jobfile-qd1/rep0").is_dir() and (tmp_path / "raw/jbod/read-nj1/rep0").is_dir()


def test_nothing_is_set_aside_when_every_layout_with_workloads_finished(tmp_path):
    rows = [row("single", "workload", "bonnie")]
    (tmp_path / campaign_folder.ROWS_FILE).write_text(json.dumps(rows[0]) + "\n")
    assert resume.set_aside_workloads(tmp_path, frozenset({"single"})) is None
    assert not (tmp_path / campaign_folder.SET_ASIDE_FILE).exists() and campaign_folder.read_rows(tmp_path)[0] == rows


def test_rows_jsonl_is_rewritten_one_way_whether_a_torn_line_is_dropped_or_rows_are_set_aside(tmp_path, monkeypatch):
    """``campaign_folder.rewrite_rows`` (tmp file, then rename) is the one rewrite: no other file is left beside the rows."""
    rows = [row("single", "measure", "read-nj1"), {**row("single", "measure", "read-nj1", rep=1), "status": "failed"},
            row("jbod", "workload", "bonnie")]
    (tmp_path / campaign_folder.ROWS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"layout": "jb')
    rewritten = []
    original = campaign_folder.rewrite_rows
    monkeypatch.setattr(campaign_folder, "rewrite_rows", lambda folder, kept: (rewritten.append(list(kept)),
                                                                        original(folder, kept)))
    assert "torn" in campaign_folder.drop_torn_line(tmp_path)
    assert resume.set_aside_failed(tmp_path).startswith("1 failed run(s) on single")
    assert resume.set_aside_workloads(tmp_path, frozenset({"single"})).startswith("1 workload row(s)")
    assert rewritten == [rows, [rows[0], rows[2]], [rows[0]]]
    assert (tmp_path / campaign_folder.ROWS_FILE).read_text() == json.dumps(rows[0]) + "\n"
    assert {p.name for p in tmp_path.iterdir()} == {campaign_folder.ROWS_FILE, campaign_folder.PROGRESS_JSON,
                                                    campaign_folder.SET_ASIDE_FILE}


def test_a_failed_run_of_the_bracket_is_set_aside_and_the_bracket_alone_runs_again(tmp_path):
    """A bracket's failed run (BRACKET: the reference swept once more) un-marks the bracket, not the reference's own
    sweep: the resume runs the bracket's runs that are missing, and jbod's measured sweep stays done."""
    rows = [row("jbod", "measure", "write-nj1"), row("btrfs-raid0", "measure", "write-nj1"),
            row("jbod", "bracket", "write-nj1", rep=1),
            {**row("jbod", "bracket", "write-nj1", rep=2), "status": "failed"}]
    (tmp_path / campaign_folder.ROWS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    for r in rows:
        (tmp_path / r["raw_dir"]).mkdir(parents=True)
    for done in ("jbod", "btrfs-raid0", results.bracket_name("jbod")):
        campaign_folder.mark_layout_done(tmp_path, done)
    assert resume.set_aside_failed(tmp_path).startswith("1 failed run(s) on jbod")
    runs, layouts = resume.finished(tmp_path)
    assert layouts == {"jbod", "btrfs-raid0"}  # the bracket is no longer done; jbod's own sweep is
    assert runs == {("jbod", "write-nj1", 0), ("btrfs-raid0", "write-nj1", 0), ("jbod", "write-nj1", 1)}
    assert (tmp_path / "raw/jbod/write-nj1/rep2.set-aside").is_dir()
    assert not (tmp_path / "raw/jbod/write-nj1/rep2").exists()
