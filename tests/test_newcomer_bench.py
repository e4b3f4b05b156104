"""Each fio run flashscale starts names its clock (the kernel's monotonic clock, fio's own choice on Linux when the
CPUs' TSCs are not proven in step), so fio skips the test of the CPU clock it otherwise makes at every start: about
0.1 s of each run's start (``make bench`` measures the campaign's whole overhead), and one clock for every run
where the test's verdict changes from run to run (this machine's VM)."""
from __future__ import annotations

from flashscale.measure import fio, precondition
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner


def test_fio_runs_with_the_clock_named_in_every_job_it_is_given(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    job = fio.FioJob("read", 4096, (str(target),), runtime_s=1, size=2**20, direct=False)
    data = fio.run(job, tmp_path / "run", Runner())
    assert data["global options"]["clocksource"] == "clock_gettime"  # what fio ran with, as it says itself
    first = precondition.job(Sweep(numjobs=(2,), size=2**20), ("/m/0",))
    for rendered in (fio.render(first), fio.render(fio.FioJob("filecreate", 4096, ("/m",), nrfiles=3))):
        assert "\nclocksource=clock_gettime\n" in rendered.split("\n\n")[0]  # in [global]: every job of the file
