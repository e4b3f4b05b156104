"""Live progress: each fio run's start and end in progress.log, on the terminal of ``flashscale run``, never in the
published report."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from flashscale.campaigns import campaign
from flashscale.notebooks import execute
from flashscale.measure import progress, units
from flashscale.measure.sweep import Sweep
from flashscale.publish import report

ROOT = Path(__file__).resolve().parents[1]
FINISHED = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (\S+) (rep\d+|round\d+): ([\d,.]+) MB/s \(([\d.]+) s\) — (\d+) left")
STARTED = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (\S+) (rep\d+|round\d+) …$")


class Bar:
    def __init__(self):
        self.n, self.total, self.postfix = 0, None, ""

    def update(self, n):
        self.n += n

    def set_postfix_str(self, text):
        self.postfix = text

    def refresh(self):
        pass


def test_the_total_counts_preconditions_and_bounds_what_an_adaptive_sweep_may_skip(tmp_path):
    sweep = Sweep(rw=["read"], numjobs=[1, 2, 4, 8], repetitions=2, runtime_s=3, ramp_s=1, adaptive="numjobs")
    assert progress.planned(sweep) == {"precondition": 1, "measure": 8, "workload": 0}
    assert progress.planned(Sweep(steady_rounds=True, rounds_max=7, repetitions=1))["precondition"] == 7
    bar = Bar()
    live = progress.Progress(sweep, 2, tmp_path, bar, lines=False)
    assert live.total == bar.total == 18
    live.started("single", "precondition-write", "rep0")
    live.finished({"phase": "precondition", "bw_bytes": 1e8})
    assert (live.done, live.total) == (1, 18) and live.eta() == pytest.approx(16 * 4 + live.walls["precondition"][0])
    for rep in (0, 1, 0, 1):  # the adaptive sweep stopped after two of its four points
        live.started("single", "p", f"rep{rep}")
        live.finished({"phase": "measure", "bw_bytes": 1e8})
    live.layout_done("single")
    assert (live.done, live.total, bar.n, bar.total) == (5, 14, 5, 14)  # the second layout's 9 are left
    assert live.left == {"precondition": 1, "measure": 8, "workload": 0}


def test_with_a_precision_the_total_bounds_each_point_by_its_most_runs_and_is_made_exact_when_a_layout_ends(tmp_path):
    sweep = Sweep(rw=["read"], numjobs=[1, 2], precision=0.05, max_repetitions=5, runtime_s=3, ramp_s=1,
                  precondition=False)  # each point 2 runs at least, 5 at the most
    assert progress.planned(sweep) == {"precondition": 0, "measure": 10, "workload": 0}
    live = progress.Progress(sweep, 2, tmp_path, Bar(), lines=False)
    assert live.total == 20
    for point, runs in (("p1", 2), ("p2", 3)):  # precise after 2 and after 3 runs
        for rep in range(runs):
            live.started("single", point, f"rep{rep}")
            live.finished({"phase": "measure", "bw_bytes": 1e8})
    live.layout_done("single")
    assert (live.done, live.total) == (5, 15)  # the second layout's 10 at the most are left


def test_workload_runs_are_counted_and_timed_once_one_has_run(tmp_path):
    sweep = Sweep(rw=["read"], numjobs=[1], repetitions=1, runtime_s=3, ramp_s=1, precondition=False)
    live = progress.Progress(sweep, 1, tmp_path, lines=False, workload_runs=2)
    assert live.total == 3
    live.started("jbod", "read-bs1048576-nj1-qd1", "rep0")
    live.finished({"phase": "measure", "bw_bytes": 2e8})
    assert live.eta() == 0  # the fio runs are done, and no workload run has been timed yet
    live.started("jbod", "bonnie p1", "rep0")
    live.ended(progress.WORKLOAD, "done")
    assert live.eta() == pytest.approx(live.walls["workload"][0])  # one left, as long as the first
    lines = (tmp_path / progress.LOG_FILE).read_text().splitlines()
    assert lines[2].endswith("2 left, ETA 0 s and 2 workload run(s) not yet timed")
    assert lines[4].startswith("[2/3] jbod bonnie p1 rep0: done (") and lines[4].endswith("1 left, ETA 0 s")


def test_a_failed_run_and_an_unknown_runtime_say_so(tmp_path, capsys):
    sweep = Sweep(rw=["read"], numjobs=[1], repetitions=2, time_based=False)
    live = progress.Progress(sweep, 1, tmp_path, None, lines=True)
    live.started("single", "precondition-x", "rep0")
    live.finished({"phase": "precondition", "bw_bytes": 2e8})
    first = capsys.readouterr().out.splitlines()
    assert first[-1].endswith("2 left, ETA unknown")  # no measured run has been timed yet, none is time based
    live.started("single", "read-bs1048576-nj1-qd1", "rep0")
    live.finished({"phase": "measure", "status": "failed", "error": "fio: No space\n left on device"})
    out = first + capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"{progress.MARK}[2/3] single read-bs1048576-nj1-qd1 rep0: failed (fio: No space "
                              "left on device)") and out[-1].endswith("1 left, ETA 0 s")
    assert all(line.startswith(progress.MARK) for line in out)
    assert (tmp_path / progress.LOG_FILE).read_text().splitlines() == [line[len(progress.MARK):] for line in out]
    assert units.span(144) == "2 min 24 s" and units.span(3900) == "1 h 5 min"


def test_a_campaign_on_directories_logs_each_run_as_it_starts_and_ends(tmp_path):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="p", DATA_DIR=str(tmp_path / "data"), EMULATION="directory", LAYOUTS=["single", "jbod"], DEVICES=2,
        RW=["read"], BS=[1048576], NUMJOBS=[1], REPETITIONS=2, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=8 * 2**20)
    result = campaign.run(spec, progress=False)
    lines = (result.directory / progress.LOG_FILE).read_text().splitlines()
    assert lines[0].endswith("6 run(s) on 2 layout(s)")  # a precondition and two repetitions on each layout
    started = [STARTED.match(line).groups() for line in lines if STARTED.match(line)]
    finished = [FINISHED.match(line).groups() for line in lines if FINISHED.match(line)]
    assert [s[2:] for s in started] == [f[2:5] for f in finished]  # every run started, then ended, in order
    assert [(int(f[0]), int(f[1])) for f in finished] == [(n, 6) for n in range(1, 7)]
    assert [int(f[7]) for f in finished] == [5, 4, 3, 2, 1, 0]
    assert [f[2] for f in finished] == ["single"] * 3 + ["jbod"] * 3
    assert [f[4] for f in finished] == ["rep0", "rep0", "rep1"] * 2 and finished[0][3].startswith("precondition-")
    table = result.table
    measured = table[table["phase"] == "measure"].sort_values("started_at")
    assert all(float(f[5].replace(",", "")) > 0 for f in finished)
    assert sorted(units.rate(bw) for bw in measured["bw_bytes"]) == sorted(
        f"{f[5]} MB/s" for f in finished if not f[3].startswith("precondition-"))
    assert all(re.search(r", ETA (\d+ min )?\d+ s$", line) for line in lines
               if FINISHED.match(line) and not line.endswith(" 0 left"))  # 1 s runs: the ETA is known throughout


def test_one_eta_counts_the_notebooks_still_to_run(tmp_path, monkeypatch):
    """Under flashscale run, each notebook's ETA adds the estimated wall time of the notebooks after it."""
    sweep = Sweep(rw=["read"], numjobs=[1], repetitions=2, runtime_s=3, ramp_s=1, precondition=False)
    monkeypatch.setenv(progress.LATER, "600")
    live = progress.Progress(sweep, layouts=1, directory=tmp_path, lines=False)
    live.started("single", "p", "rep1")
    live.ended("measure", "done")
    last = (tmp_path / progress.LOG_FILE).read_text().splitlines()[-1]
    assert re.search(r"1 left, ETA 10 min (\d+ s )?with the notebooks after this one$", last), last
    for bad in ("-5", "nan", "soon", ""):
        monkeypatch.setenv(progress.LATER, bad)
        assert progress.later_seconds() == pytest.approx(0.0, abs=0)
    monkeypatch.delenv(progress.LATER)
    alone = progress.Progress(sweep, layouts=1, lines=False)
    assert alone.later_s == pytest.approx(0.0, abs=0)


def test_the_terminal_echo_writes_only_progress_lines_even_split_across_writes(capsys):
    echo = execute.TerminalEcho()
    echo.write(f"a cell's own print\n{progress.MARK}[1/2] single p rep0 …\n{progress.MARK}[1/2] sin")
    echo.write("gle p rep0: 1.0 MB/s (1.0 s) — 1 left, ETA 1 s\n")
    echo.flush()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["[1/2] single p rep0 …", "[1/2] single p rep0: 1.0 MB/s (1.0 s) — 1 left, ETA 1 s"]


def test_a_report_leaves_progress_lines_out_and_keeps_what_a_cell_printed():
    cell = nbformat.v4.new_code_cell("run()", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=f"{progress.MARK}[1/1] single p rep0 …\nkept\n"),
        nbformat.v4.new_output("stream", name="stdout", text=f"{progress.MARK}[1/1] single p rep0: 1 MB/s\n")])
    notebook = report.without_progress(nbformat.v4.new_notebook(cells=[cell]))
    assert [o["text"] for o in notebook.cells[0]["outputs"]] == ["kept\n"]


@pytest.mark.notebook
def test_flashscale_run_prints_each_run_and_its_report_shows_none(tmp_path, capsys):
    path = tmp_path / "pr.yaml"
    path.write_text(yaml.safe_dump({"campaign": "pr", "notebooks": ["quickstart"], "parameters": dict(
        DATA_DIR=str(tmp_path / "data"), EMULATION="directory", LAYOUTS=["single", "jbod"], DEVICES=2, RW=["read"],
        NUMJOBS=[1], REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=8 * 2**20, PROGRESS=False)}))
    [html] = execute.run_campaign(path, reports_dir=tmp_path / "reports")
    err = capsys.readouterr().err.splitlines()
    finished = [line for line in err if FINISHED.match(line)]
    assert [FINISHED.match(line).group(1, 2, 8) for line in finished] == [(str(n), "4", str(4 - n)) for n in (1, 2, 3, 4)]
    assert any(STARTED.match(line) for line in err)
    assert not any(line.startswith(progress.MARK) for line in err)
    text = html.read_text()
    assert progress.MARK not in text and "left, ETA" not in text and "run(s) on 2 layout(s)" not in text
    assert not any(line.split(":")[0] in text for line in finished)  # "[1/4] single precondition-... rep0"
    [log] = (tmp_path / "data" / "pr").rglob(progress.LOG_FILE)
    assert [line for line in log.read_text().splitlines() if FINISHED.match(line)] == finished
