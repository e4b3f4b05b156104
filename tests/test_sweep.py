"""Sweeps are declared axes, expanded in one place."""
from __future__ import annotations

import numpy as np
import pytest

from flashscale.errors import ConfigError
from flashscale.measure import adaptive, jobrun
from flashscale.measure.sweep import Sweep, positive_ints
from flashscale.measure.workloads import bonnie, pgbench, transfer


def test_the_count_is_the_product_of_the_axes_times_the_runs_per_point():
    sweep = Sweep(rw=["write", "read"], bs=[4096, 2**20, 2**24], numjobs=[1, 2, 4, 8], iodepth=[1, 32],
                  repetitions=3, warmup=True)
    assert len(sweep.points()) == 2 * 3 * 4 * 2
    assert sweep.reps() == [(0, True), (1, False), (2, False), (3, False)]
    assert sweep.runs() == 48 * 4


def test_points_keep_the_declared_order_rw_outermost():
    points = Sweep(rw=["write", "read"], bs=[1, 2], numjobs=[1], iodepth=[1]).points()
    assert [(p["rw"], p["bs"]) for p in points] == [("write", 1), ("write", 2), ("read", 1), ("read", 2)]


def test_without_warmup_every_run_is_measured():
    assert Sweep(repetitions=2, warmup=False).reps() == [(0, False), (1, False)]
    assert Sweep(repetitions=2).reps() == [(0, False), (1, False)]  # preconditioned: no warm-up by default


@pytest.mark.parametrize("flag", ["precondition", "warmup"])
def test_flags_are_true_or_false(flag):
    with pytest.raises(ConfigError, match=f"{flag}='yes'"):
        Sweep(**{flag: "yes"})


@pytest.mark.parametrize("kwargs,named", [
    ({"bs": [4096, 0]}, "bs value 0"),
    ({"numjobs": []}, "numjobs must list"),
    ({"iodepth": "32"}, "iodepth='32'"),
    ({"rw": ["read", "seqread"]}, "seqread"),
    ({"repetitions": 0}, "repetitions=0"),
    ({"numjobs": [1, True]}, "numjobs value True"),
])
def test_bad_axes_are_named(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        Sweep(**kwargs)


def test_jobs_carry_the_sweep_settings():
    job = Sweep(runtime_s=7, ramp_s=2, size=2**27).job({"rw": "read", "bs": 4096, "numjobs": 3, "iodepth": 16},
                                                       ("/m/0",))
    assert (job.runtime_s, job.ramp_s, job.size, job.numjobs, job.iodepth) == (7, 2, 2**27, 3, 16)
    assert job.point == "read-bs4096-nj3-qd16"


def test_fio_s_steady_state_goes_to_every_measured_job_and_is_checked():
    sweep = Sweep(ss="bw:10%", ss_dur_s=4, ss_ramp_s=1)
    job = sweep.job(sweep.points()[0], ("/m",))
    assert (job.ss, job.ss_dur_s, job.ss_ramp_s) == ("bw:10%", 4, 1)
    with pytest.raises(ConfigError, match="ss='bw 10'"):
        Sweep(ss="bw 10", ss_dur_s=4)


@pytest.mark.parametrize("kwargs,named", [
    ({"rounds_max": 4}, "rounds_max=4"),
    ({"steady_rounds": "yes"}, "steady_rounds='yes'"),
    ({"steady_rounds": True, "precondition": False}, "needs precondition=True"),
])
def test_rounds_are_checked(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        Sweep(**kwargs)


@pytest.mark.parametrize("make,named", [
    (lambda: Sweep(numjobs=[1, 0]), "numjobs value 0 must be a positive whole number"),
    (lambda: jobrun.checked_axes({"iodepth": [4, True]}), "job file axis iodepth value True must be a positive"),
    (lambda: jobrun.checked_axes({"bs": 4096}), "job file axis bs=4096 must be a list"),
    (lambda: bonnie.Bonnie(processes=(2, -1)), r"bonnie\+\+ processes value -1 must be a positive whole number"),
    (lambda: bonnie.Bonnie(file_mib=0), r"bonnie\+\+ file_mib value 0 must be"),
    (lambda: pgbench.Pgbench(clients=()), "pgbench clients must list at least one value"),
    (lambda: pgbench.Pgbench(duration_s=1.5), "pgbench duration_s value 1.5 must be"),
    (lambda: transfer.Transfer(streams="4"), "transfer streams='4' must be a list"),
    (lambda: adaptive.checked_grid([1, 2, 0]), "adaptive grid value 0 must be a positive whole number"),
])
def test_every_axis_and_count_is_checked_one_way_naming_the_value_and_the_parameter(make, named):
    with pytest.raises(ConfigError, match=named):
        make()


def test_the_checked_values_are_kept_as_tuples_and_an_adaptive_grid_takes_numpy_s_integers():
    assert positive_ints("numjobs", [1, 2]) == (1, 2) and jobrun.checked_axes({"numjobs": [4]}) == {"numjobs": (4,)}
    assert bonnie.Bonnie(processes=[1, 4]).processes == (1, 4) and transfer.Transfer(streams=[2]).streams == (2,)
    grid = adaptive.checked_grid(np.array([8, 1, 2]))
    assert grid == (1, 2, 8) and all(type(v) is int for v in grid)
