"""The fio module: job validation, rendering, and parsing of output that real fio produced (tests/golden)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashscale.measure import fio, fio_output, jobfile, jobrun
from flashscale.system.commands import Completed, RecordingRunner
from flashscale.errors import ConfigError, FioError

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str) -> str:
    return (GOLDEN / f"{name}.json").read_text()


def test_jobs_spread_evenly_over_targets_earlier_ones_take_the_remainder():
    job = fio.FioJob("read", 2**20, ("/m/0", "/m/1", "/m/2", "/m/3"), numjobs=6)
    assert job.jobs_per_target() == [2, 2, 1, 1]
    assert sum(fio.FioJob("read", 4096, ("/a", "/b", "/c"), numjobs=n).jobs_per_target() == [n // 3 + (i < n % 3) for i in range(3)]
               for n in range(1, 10)) == 9


def test_render_names_every_option_and_skips_targets_without_jobs():
    text = fio.render(fio.FioJob("randwrite", 4096, ("/m/0", "/m/1", "/dev/loop7"), numjobs=2, iodepth=8,
                                 runtime_s=5, ramp_s=1))
    assert "rw=randwrite\n" in text and "bs=4096\n" in text and "iodepth=8\n" in text
    assert "runtime=5\n" in text and "ramp_time=1\n" in text and "direct=1\n" in text
    assert "ioengine=libaio\n" in text and "group_reporting=1\n" in text and "time_based=1\n" in text
    assert "[flashscale-t0]\nnumjobs=1\ndirectory=/m/0\n" in text
    assert "[flashscale-t1]\nnumjobs=1\ndirectory=/m/1\n" in text
    assert "loop7" not in text  # the third target got no job


def test_render_uses_filename_for_block_devices():
    text = fio.render(fio.FioJob("read", 2**20, ("/dev/loop3",)))
    assert "filename=/dev/loop3\n" in text and "directory=" not in text


def test_render_sends_an_nbd_target_through_fio_s_nbd_engine():
    uris = ("nbd://10.213.1.1:10809/", "nbd://10.213.1.1:10810/")
    text = fio.render(fio.FioJob("read", 2**20, uris, numjobs=2))
    sections = text.split("\n\n")[1:]
    assert [s.splitlines()[2:] for s in sections] == [["ioengine=nbd", f"uri={u}"] for u in uris]
    assert "filename=" not in text and "directory=" not in text
    assert fio.is_device(uris[0]) and fio.is_device("/dev/loop3") and not fio.is_device("/mnt/x")
    for device in (uris[0], "/dev/loop3"):  # a metadata engine makes files: it needs a file system
        with pytest.raises(ConfigError, match="is a whole device"):
            fio.FioJob("filecreate", 4096, ("/mnt/x", device), nrfiles=10)


@pytest.mark.parametrize("field,value", [("bs", 0), ("bs", "1M"), ("numjobs", -1), ("iodepth", 1.5),
                                         ("runtime_s", 0), ("size", True), ("ramp_s", -1)])
def test_bad_job_values_are_named(field, value):
    kwargs = dict(rw="read", bs=4096, targets=("/m",))
    kwargs[field] = value
    with pytest.raises(ConfigError, match=field):
        fio.FioJob(**kwargs)


def test_bad_rw_and_missing_targets_are_refused():
    with pytest.raises(ConfigError, match="'sequential'"):
        fio.FioJob("sequential", 4096, ("/m",))
    with pytest.raises(ConfigError, match="at least one target"):
        fio.FioJob("read", 4096, ())
    with pytest.raises(ConfigError, match="one string"):
        fio.FioJob("read", 4096, "/mnt")


def test_parse_sums_the_group_of_three_jobs_over_two_targets():
    data = fio_output.load_output(golden("read_2targets_3jobs"))
    fio_output.validate(data)
    raw = json.loads(golden("read_2targets_3jobs"))
    job = raw["jobs"][0]
    assert len(raw["jobs"]) == 1  # group_reporting folds the three jobs into one entry
    row = fio_output.parse(data)
    assert row["bw_bytes"] == job["read"]["bw_bytes"] > 0
    assert row["write_bw_bytes"] == 0
    assert row["iops"] == pytest.approx(job["read"]["iops"])
    assert row["io_bytes"] == job["read"]["io_bytes"]
    assert row["runtime_s"] == job["read"]["runtime"] / 1000
    assert row["clat_p50_ns"] == job["read"]["clat_ns"]["percentile"]["50.000000"]
    assert row["clat_p999_ns"] == job["read"]["clat_ns"]["percentile"]["99.900000"]
    assert row["clat_mean_ns"] == job["read"]["clat_ns"]["mean"]
    assert row["fio_version"].startswith("fio-")
    assert data["_preamble"] == ""


def test_parse_takes_latency_from_the_write_side_of_a_write_job():
    raw = json.loads(golden("write_1target"))["jobs"][0]
    row = fio_output.parse(fio_output.load_output(golden("write_1target")))
    assert row["bw_bytes"] == row["write_bw_bytes"] == raw["write"]["bw_bytes"]
    assert row["clat_p99_ns"] == raw["write"]["clat_ns"]["percentile"]["99.000000"]


def test_parse_adds_both_directions_of_a_mixed_job():
    raw = json.loads(golden("randrw_mixed"))["jobs"][0]
    row = fio_output.parse(fio_output.load_output(golden("randrw_mixed")))
    assert raw["read"]["bw_bytes"] > 0 and raw["write"]["bw_bytes"] > 0
    assert row["bw_bytes"] == raw["read"]["bw_bytes"] + raw["write"]["bw_bytes"]
    assert row["iops"] == pytest.approx(raw["read"]["iops"] + raw["write"]["iops"])


def test_text_before_the_json_is_kept_and_the_job_error_is_caught():
    data = fio_output.load_output(golden("error_in_json"))
    assert data["_preamble"].startswith("fio: pid=0, err=1")
    with pytest.raises(FioError, match="'bad' failed with error 1"):
        fio_output.validate(data)


def test_output_without_json_is_an_error():
    with pytest.raises(FioError, match="no JSON"):
        fio_output.load_output(golden("no_json"))
    with pytest.raises(FioError, match="not valid JSON"):
        fio_output.load_output('{"jobs": [')


def test_a_job_that_moved_no_data_is_an_error():
    data = json.loads(golden("write_1target"))
    data["jobs"][0]["write"]["io_bytes"] = 0
    with pytest.raises(FioError, match="moved no data"):
        fio_output.validate(data)


def test_run_keeps_job_file_and_refuses_to_overwrite_a_point(tmp_path):
    runner = RecordingRunner()
    job = fio.FioJob("read", 4096, ("/m",))
    with pytest.raises(FioError, match="no output file"):
        fio.run(job, tmp_path / "p", runner)
    assert (tmp_path / "p" / "job.fio").read_text() == fio.render(job)
    assert runner.history[-1] == ("fio", "--output-format=json", f"--output={tmp_path / 'p' / 'fio.json'}",
                                  str(tmp_path / "p" / "job.fio"))
    with pytest.raises(FileExistsError):
        fio.run(job, tmp_path / "p", runner)


def test_fio_s_own_steady_state_is_rendered_with_its_window_and_ramp():
    text = fio.render(fio.FioJob("write", 4096, ("/m",), ss="iops_slope:0.3%", ss_dur_s=30, ss_ramp_s=5))
    assert "steadystate=iops_slope:0.3%\nss_dur=30\nss_ramp=5\n" in text
    assert "steadystate" not in fio.render(fio.FioJob("write", 4096, ("/m",)))


@pytest.mark.parametrize("kwargs,named", [
    ({"ss": "lat:1%", "ss_dur_s": 5}, "ss='lat:1%'"),
    ({"ss": "bw:ten%", "ss_dur_s": 5}, "ss='bw:ten%'"),
    ({"ss": "bw:10%"}, "needs ss_dur_s"),
    ({"ss": "bw:10%", "ss_dur_s": 0}, "ss_dur_s=0"),
    ({"ss": "bw:10%", "ss_dur_s": 5, "ss_ramp_s": -1}, "ss_ramp_s=-1"),
])
def test_bad_steady_state_options_are_named(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        fio.FioJob("write", 4096, ("/m",), **kwargs)


@pytest.mark.parametrize("name", ["steadystate_attained", "steadystate_not_attained"])
def test_parse_reads_fio_s_steady_state_verdict(name):
    data = fio_output.load_output(golden(name))
    raw = data["jobs"][0]["steadystate"]
    row = fio_output.parse(data)
    assert row["ss_attained"] is bool(raw["attained"])
    assert (row["ss"], row["ss_criterion"]) == (raw["ss"], raw["criterion"])
    # attained, fio stops the job before its runtime; never attained, it runs it all (4 s)
    assert (row["runtime_s"] < 4.0) is row["ss_attained"]


def test_a_run_that_asked_for_no_steady_state_has_no_verdict():
    row = fio_output.parse(fio_output.load_output(golden("write_1target")))
    assert (row["ss_attained"], row["ss"], row["ss_criterion"]) == (None, None, None)


def test_a_time_based_write_counts_the_flush_of_its_data_and_a_read_has_none():
    write = fio.render(fio.FioJob("write", 2**20, ("/m/0",), runtime_s=3))
    randrw = fio.render(fio.FioJob("randrw", 4096, ("/m/0",), runtime_s=3))
    read = fio.render(fio.FioJob("read", 2**20, ("/m/0",), runtime_s=3))
    own = fio.render(fio.FioJob("write", 2**20, ("/m/0",), runtime_s=3, extra=(("end_fsync", "0"),)))
    assert "end_fsync=1\n" in write and "end_fsync=1\n" in randrw and "end_fsync" not in read
    assert "end_fsync=0\n" in own and "end_fsync=1" not in own  # the user's own choice stands


class FioThatSays:
    """A runner whose fio writes ``output`` (None: nothing) to its --output file and says ``stderr``."""

    def __init__(self, output: str | None, returncode: int = 0, stderr: str = ""):
        self.output, self.returncode, self.stderr, self.history = output, returncode, stderr, []

    def run(self, argv, *, ok_codes=(0,), cgroup_procs=(), timeout=None) -> Completed:
        argv = tuple(str(a) for a in argv)
        self.history.append(argv)
        written = [a.split("=", 1)[1] for a in argv if a.startswith("--output=")]
        if written and self.output is not None:
            Path(written[0]).write_text(self.output)
        return Completed(argv, self.returncode if written else 0, "", self.stderr if written else "")


@pytest.mark.parametrize("output,returncode,stderr,message", [
    (None, 1, "line1\nline2\nfio: pid=1, err=28/file:engines/sync.c, error=No space left on device\n",
     "fio wrote no output file .*fio.json: line1 line2 fio: pid=1, err=28.*No space left on device$"),
    (None, 0, "", "fio wrote no output file .*: nothing on stderr$"),
    (golden("error_in_json"), 1, "fio: io_u error\n", r"fio exited with status 1 for .*job.fio \(.*error .*\): fio"),
    ("garbage", 0, "", "no JSON object in fio output"),
])
def test_our_jobs_and_a_user_s_job_file_end_the_same_way(tmp_path, output, returncode, stderr, message):
    """``fio.run_file`` is the one tail after fio (stderr kept, output loaded, exit status and jobs checked) for
    flashscale's own jobs (``fio.run``) and a user's job file (``jobrun.run``): the same error for the same fio."""
    user = tmp_path / "user.fio"
    user.write_text("[scan]\nrw=read\nsize=1m\n")
    target = tmp_path / "m0"
    target.mkdir()
    ours, theirs = FioThatSays(output, returncode, stderr), FioThatSays(output, returncode, stderr)
    with pytest.raises(FioError, match=message) as from_ours:
        fio.run(fio.FioJob("read", 4096, (str(target),)), tmp_path / "ours", ours)
    with pytest.raises(FioError, match=message) as from_theirs:
        jobrun.run(jobfile.JobFile.read(user), [str(target)], tmp_path / "theirs", theirs)
    assert str(from_ours.value).replace("ours", "X") == str(from_theirs.value).replace("theirs", "X")
    for runner, folder in ((ours, tmp_path / "ours"), (theirs, tmp_path / "theirs")):
        aux = (f"--aux-path={folder.resolve()}",) if runner is theirs else ()
        assert runner.history[-1] == ("fio", "--output-format=json", f"--output={folder / 'fio.json'}", *aux,
                                      str(folder / "job.fio"))
        assert (folder / "fio.stderr").exists() == bool(stderr)


def test_a_target_names_a_device_one_way_in_measure():
    """A job file's targets are classified as flashscale's own jobs are (``fio.is_device``); an nbd:// export is
    a device there, and a user's job file is never pointed at one (its targets must be absolute paths)."""
    assert jobfile.is_device is fio.is_device
    assert fio.is_device("/dev/loop3") and fio.is_device("nbd://10.0.0.2:10809/") and not fio.is_device("/mnt/0")
    with pytest.raises(ConfigError, match="give absolute paths"):
        jobfile.JobFile.read(Path(__file__).parent / "jobfiles" / "basic_randread.fio").rewrite(
            ["nbd://10.0.0.2:10809/"], "/r")


@pytest.mark.parametrize("grouped", [True, False], ids=["group_reporting", "per-job"])
def test_fio_cpu_is_the_cpu_time_its_process_used_over_the_run(tmp_path, grouped):
    """fio_usr_cpu + fio_sys_cpu (percent of one CPU, all jobs together) against the CPU time the kernel charged
    the fio process (getrusage of its children): fio's group_reporting gives the mean of its jobs' percents, so a
    parser that read usr_cpu as it stands would see half of what 2 busy jobs use."""
    import resource
    import subprocess
    out = tmp_path / "fio.json"
    argv = ["fio", "--name=cpu", "--ioengine=null", "--rw=read", "--bs=4k", "--size=1T", "--numjobs=2",
            "--time_based", "--runtime=2", "--output-format=json", f"--output={out}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv + (["--group_reporting"] if grouped else []), check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = fio_output.load_output(out.read_text())
    row = fio_output.parse(data)
    charged = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reported = (row["fio_usr_cpu"] + row["fio_sys_cpu"]) / 100 * row["runtime_s"]
    assert len(data["jobs"]) == (1 if grouped else 2)
    assert reported == pytest.approx(charged, rel=0.25)
    entries = sum(j["usr_cpu"] + j["sys_cpu"] for j in data["jobs"])
    assert (row["fio_usr_cpu"] + row["fio_sys_cpu"]) / entries == pytest.approx(2 if grouped else 1, rel=0.1)


def test_fio_cpu_is_nan_where_fio_gave_none():
    data = json.loads(golden("write_1target"))
    for job in data["jobs"]:
        del job["job_runtime"]
    row = fio_output.parse(data)
    assert row["fio_usr_cpu"] != row["fio_usr_cpu"] and row["fio_sys_cpu"] != row["fio_sys_cpu"]
