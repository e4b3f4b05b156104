"""A point's repetitions in one fio process (BATCH_REPS, measure.batch): real fio on a folder runs them stonewalled,
each run still its own row and its own raw files, as a run of its own would have given them."""
from __future__ import annotations

import json

import pytest
from tqdm.std import tqdm

from flashscale.arrays import layouts
from flashscale.campaigns import campaign
from flashscale.errors import ConfigError
from flashscale.measure import batch, fio, fio_output, results
from flashscale.measure.recorder import Recorder
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner


class CountingRunner(Runner):
    """A runner that counts the fio processes that ran a job file."""

    fio_runs = 0

    def run(self, argv, *args, **kwargs):
        self.fio_runs += bool(argv and argv[0] == "fio" and str(argv[-1]).endswith(".fio"))
        return super().run(argv, *args, **kwargs)


def test_the_batch_file_stonewalls_each_run_after_the_first_and_keeps_its_sections_together(tmp_path):
    job = fio.FioJob("write", 2**20, (str(tmp_path / "a"), str(tmp_path / "b")), numjobs=3, runtime_s=1, ramp_s=0,
                     size=2**20)
    text = batch.render_batch([job] * 3, [tmp_path / f"rep{k}" for k in range(3)])
    sections = text.split("\n\n")[1:]
    assert len(sections) == 3 * 2  # two targets a run
    walls = [("stonewall" in s.splitlines(), "new_group" in s.splitlines()) for s in sections]
    assert walls == [(False, False), (False, False), (True, True), (False, False), (True, True), (False, False)]
    assert [s.splitlines()[0] for s in sections][::2] == [f"[r{k}-{job.name}-t0]" for k in range(3)]
    assert text.count("group_reporting=1") == 1  # shared options stay global


def test_a_batched_point_is_one_fio_process_and_each_run_its_own_row_and_files(tmp_path):
    runner = CountingRunner()
    sweep = Sweep(rw=["write"], numjobs=(1, 2), repetitions=3, runtime_s=1, ramp_s=0, size=8 * 2**20,
                  direct=False, precondition=False, batch_reps=True, cpu_latency_us=None)
    target = tmp_path / "target"
    target.mkdir()
    recorder = Recorder("b", "localhost", sweep, tmp_path / "c", runner, "run", {"read": None, "write": None},
                        tqdm(disable=True), {})
    recorder.sweep(layouts.Layout("single", 1, (str(target),), "directory", "a folder"), [])
    assert runner.fio_runs == 2  # one a point, where unbatched it is one a run (6)
    table = results.rebuild_table(tmp_path / "c")
    measured = table[table["phase"] == "measure"]
    assert len(measured) == 6 and set(measured["status"]) == {"ok"} and set(measured["reps_reason"]) == {"fixed"}
    for row in measured.itertuples():
        raw = tmp_path / "c" / row.raw_dir
        own = json.loads((raw / "fio.json").read_text())
        assert len(own["jobs"]) == 1 and own["jobs"][0]["groupid"] == row.rep
        assert fio_output.parse(own)["bw_bytes"] == pytest.approx(row.bw_bytes, rel=1e-9)
        assert "stonewall" not in (raw / "job.fio").read_text().splitlines()  # the run's own job, as a run alone renders it
        assert (raw.parent / batch.BATCH_FILE).is_file() and (raw.parent / batch.BATCH_OUTPUT).is_file()


def test_batch_reps_is_a_parameter_and_a_flag():
    assert campaign.CampaignSpec.from_parameters(BATCH_REPS=True).sweep.batch_reps
    with pytest.raises(ConfigError, match="batch_reps="):
        Sweep(batch_reps="yes")


def test_consecutive_points_in_one_fio_process_each_its_own_run_and_files(tmp_path):
    """Points that need nothing from flashscale between them (the same targets, no precondition or build between):
    another rw, block size and job count in one batch, each run's output its own point's."""
    runner = CountingRunner()
    target = tmp_path / "target"
    target.mkdir()
    points = [fio.FioJob(rw, bs, (str(target),), numjobs=nj, runtime_s=1, ramp_s=0, size=4 * 2**20, direct=False)
              for rw, bs, nj in (("write", 2**20, 1), ("write", 2**16, 2), ("read", 2**20, 2))]
    outdirs = [tmp_path / "batch" / f"p{k}" for k in range(len(points))]
    documents = batch.run(points, outdirs, tmp_path / "batch", runner)
    assert runner.fio_runs == 1
    for job, outdir, document in zip(points, outdirs, documents):
        own = json.loads((outdir / "fio.json").read_text())
        assert own == document
        options = own["jobs"][0]["job options"]
        assert (options["rw"], options["bs"], options["numjobs"]) == (job.rw, str(job.bs), str(job.numjobs))
        assert fio_output.parse(own)[f"{job.rw}_bw_bytes"] > 0
        assert (outdir / "job.fio").read_text() == fio.render(job, log_dir=outdir.resolve())
