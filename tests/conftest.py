"""Shared fixtures. Tests marked ``root`` need root, loop devices and block throttling; elsewhere they are
skipped with the reason. Every loop device a test makes, it detaches itself, by name."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest

from flashscale import cli
from flashscale.arrays.emulated import CAP_FIT_ENV
from flashscale.campaigns import campaign
from flashscale.errors import HarnessCeilingError
from flashscale.measure import campaign_folder, results
from flashscale.system.vmlab import vm
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.arrays.emulated import loop_support_problem
from flashscale.system.throttle import detect
from flashscale.paths import project_root
from flashscale.system.teardown import manifest_dir

loop_backing_file = System().loop_backing  # what losetup shows: the file behind a loop device, or None


def _root_problem() -> str | None:
    problem = loop_support_problem()
    if problem:
        return problem
    if shutil.which("fio") is None:
        return "fio is not installed"
    try:
        detect()
    except Exception as exc:  # UnsupportedError: say why
        return str(exc)
    return None


ROOT_PROBLEM = _root_problem()

# A test held to a cap proves the harness only where this machine carries that cap: every campaign the suite runs
# measures its test bed uncapped first (measure.harness) and, where the caps it chose ask more than half of what was
# carried, refuses (HarnessCeilingError; `flashscale` exits 4) instead of lowering them. The test is then skipped
# with the measured reason. Tests of the lowering itself ask for CAP_FIT='lower'. Notebooks' kernels, `flashscale`
# in a subprocess and the VM lab's guest inherit it.
os.environ.setdefault(CAP_FIT_ENV, "refuse")


def _skip_harness(exc: HarnessCeilingError):
    pytest.skip(f"this machine cannot carry the caps the test chose: {exc}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except HarnessCeilingError as exc:
        _skip_harness(exc)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A fixture refused by the harness skips every test that asks for it. pytest keeps a fixture's error as its
    cached result and raises that again for the module's other tests without this hook: the skip is cached in its
    place (under make test-half-cpu the cluster's module fixture skipped its first test and errored 8 others)."""
    try:
        return (yield)
    except HarnessCeilingError as exc:
        try:
            _skip_harness(exc)
        except pytest.skip.Exception as skip:
            if fixturedef.cached_result is not None:
                fixturedef.cached_result = (None, fixturedef.cached_result[1], (skip, skip.__traceback__))
            raise


@pytest.fixture(autouse=True)
def _harness_refusal_skips(monkeypatch):
    """``flashscale`` run in-process (``cli.main``) that exits 4 (HarnessCeilingError) skips its test; the measured
    reason is the last line it printed on stderr."""
    main = cli.main

    def main_or_skip(argv=None):
        status = main(argv)
        if status == cli.HARNESS_CEILING:
            pytest.skip("this machine cannot carry the caps the test chose: flashscale exited "
                        f"{cli.HARNESS_CEILING}, saying why on stderr")
        return status

    main_or_skip.__wrapped__ = main  # the command itself, for a test of its exit status
    monkeypatch.setattr(cli, "main", main_or_skip)
VM_PROBLEM = vm.prerequisites_problem(System(), Runner())


# The suite's budget in seconds (make test sets it): a session longer than that by more than BUDGET_MARGIN fails,
# after pytest's --durations list has named the slowest tests. The margin is what a run on this machine varies by
# and more (the fresh clones of one commit took 1,295-1,327 s: 2.5%), so a pass is not luck and a fail is a cause.
# make test runs the suite in several pytest sessions (the Makefile's two_parts, then nbval):
# SINCE_ENV is when the first began (seconds since the epoch), so each session is held to the suite's time so far.
BUDGET_ENV, BUDGET_MARGIN, SINCE_ENV = "FLASHSCALE_SUITE_BUDGET_S", 0.15, "FLASHSCALE_SUITE_SINCE"
_STARTED = pytest.StashKey[float]()


def pytest_sessionstart(session):
    session.config.stash[_STARTED] = time.time()


def suite_started(config) -> float:
    """When the suite began: SINCE_ENV where make test set it, else this session's start."""
    since = os.environ.get(SINCE_ENV, "")
    return float(since) if since.isdigit() else config.stash[_STARTED]


def pytest_sessionfinish(session, exitstatus):
    budget = os.environ.get(BUDGET_ENV)
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: its controller holds the budget
        return
    if not budget or exitstatus not in (0, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        return
    took, most = time.time() - suite_started(session.config), float(budget) * (1 + BUDGET_MARGIN)
    if took > most:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"the suite took {took:.0f} s, over its budget of {float(budget):.0f} s by more "
                                f"than {BUDGET_MARGIN:.0%} ({most:.0f} s): see the slowest tests above", red=True)


# make test runs the root tests three at a time (pytest-xdist, --dist loadfile): each module's tests on one worker, so
# that a module's fixtures (a campaign read by many tests) are made once. The modules that make network namespaces,
# veth links and sshds are one group, which one worker runs in turn: they take one private range (10.213.0.0/16 for
# the emulated cluster), flashscale's one ship folder, and check that no namespace or link is left on the machine,
# which another such test's would break. Tests marked ``alone`` run after them, one at a time (the Makefile).
# (xdist's own --dist loadgroup cannot be used: it renames each test's node id, which pytest 9 no longer lets it.)
# The modules that read the session's ``applications`` campaign are one group too: it is made once a worker.
# nbval's notebooks (the Makefile's NBVAL_NOTEBOOKS, whose cells are tests of their own) are root tests of make test's
# root part: 10_cluster makes the emulated cluster's hosts, so it runs in the hosts' group.
HOSTS_GROUP = "hosts"
GROUPS = {**dict.fromkeys(("test_netns", "test_cluster", "test_cluster_loop", "test_ssh_cluster", "test_ssh_attacker",
                           "test_ssh_hosts", "test_harness", "10_cluster"), HOSTS_GROUP),
          **dict.fromkeys(("test_applications_notebook", "test_bonnie_loop", "test_pgbench_loop",
                           "test_transfer_loop"), "applications")}


def worker_group(nodeid: str) -> str:
    """The worker group of a test's node id: its module's in ``GROUPS`` (the hosts', the applications'), else its
    file."""
    file = nodeid.split("::", 1)[0]
    return GROUPS.get(Path(file).stem, file)


# The root tests' groups that take longest, longest first (seconds of one make test-fresh-root's root part, 973 s
# for all the groups three at a time): given out first, so the last group a worker starts is a short one (longest
# processing time first). xdist alone gives groups out by their number of tests: the quickstart's one test of 91 s
# started 330 s into the part, which ran 400 s; a group not named here goes after these,
# those of the most tests first, as xdist's own order (the long tests' groups, make test-long).
LONGEST_FIRST = ("hosts",  # 246 s
                 "test_sequential_campaign", "test_quickstart", "test_resume", "test_bench_cost",  # 102, 91, 85, 56
                 "test_campaign", "test_tax_slow_device", "test_campaign_testbed", "test_kill_points",  # 46, 44, 32, 30
                 "test_adaptive_sweep", "test_drift_loop", "test_repetitions", "test_resume_cli")  # 29, 28, 27, 25


def _longest_first(group: str) -> int:
    name = Path(group).stem if group.endswith(".py") else group
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_xdist_make_scheduler(config, log):
    """With --dist loadfile, xdist's file scheduling with the modules that make hosts as one (``worker_group``),
    given out in the order ``pytest_collection_modifyitems`` leaves them (``LONGEST_FIRST``)."""
    if config.getoption("dist", default=None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False

    class ByGroup(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByGroup(config, log)


NOTEBOOK_CELL = (pytest.mark.root, pytest.mark.notebook)  # what an nbval cell is: it runs a notebook's campaign


def _as_a_user(start_kernel):
    """nbval starts a notebook's kernel in its notebook's setup, and the kernel inherits this process's environment:
    started without the suite's CAP_FIT=refuse, which a user's environment does not have, so nbval runs the notebook
    as a user would (caps lowered to fit). (A conftest.py beside the notebooks cannot do it: its module would be
    imported as ``conftest``, the name the tests import this one by.)"""
    def without_the_suite_s_cap_fit():
        suite = os.environ.pop(CAP_FIT_ENV, None)
        try:
            return start_kernel()
        finally:
            if suite is not None:
                os.environ[CAP_FIT_ENV] = suite
    return without_the_suite_s_cap_fit


@pytest.hookimpl(tryfirst=True)  # before -m selects: an nbval cell is selected as a root test
def pytest_collection_modifyitems(config, items):
    for notebook in {item.parent for item in items if item.path.suffix == ".ipynb"}:
        notebook.setup = _as_a_user(notebook.setup)
    for item in items:
        if item.path.suffix == ".ipynb":
            for mark in NOTEBOOK_CELL:
                item.add_marker(mark)
    if config.getoption("dist", default=None) == "loadfile":  # the longest groups first, then the most tests first
        tests = Counter(worker_group(item.nodeid) for item in items)
        items.sort(key=lambda item: (_longest_first(worker_group(item.nodeid)), -tests[worker_group(item.nodeid)]))
    root = pytest.mark.skip(reason=f"needs root, loop devices and block throttling: {ROOT_PROBLEM}")
    lab = pytest.mark.skip(reason=f"needs the VM lab (make deps-vm): {VM_PROBLEM}")
    for item in items:
        if "root" in item.keywords and ROOT_PROBLEM is not None:
            item.add_marker(root)
        elif "vm" in item.keywords and VM_PROBLEM is not None:
            item.add_marker(lab)


def interruptible() -> None:
    """A child's Ctrl-C is Python's KeyboardInterrupt: a shell that runs the suite in the background starts it with
    SIGINT ignored, which its children would inherit and Python then honour (the interrupt tests would prove
    nothing). Given to Popen as ``preexec_fn``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.fixture
def foreign_loop(tmp_path_factory):
    """A loop device made by the test, outside flashscale, with known contents; detached afterwards."""
    backing = tmp_path_factory.mktemp("foreign") / "foreign.img"
    backing.write_bytes(os.urandom(1 << 20) * 8)
    path = subprocess.run(["losetup", "--find", "--show", str(backing)], check=True, capture_output=True,
                          text=True).stdout.strip()
    yield {"path": path, "backing": str(backing), "sha256": sha256(path)}
    subprocess.run(["losetup", "--detach", path], check=False)


def loop_devices_backed_under(folder: Path) -> list[str]:
    """Attached loop devices whose backing file lies under ``folder``."""
    out = subprocess.run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(folder) in line]


@contextlib.contextmanager
def shm_folder(fallback: Path):
    """A folder of the caller's own for emulated devices' backing files, on tmpfs (/dev/shm) as the library's default
    is: loop devices backed on the test machine's disk write below their cap, since fio's end_fsync flushes the
    backing files' dirty pages to that disk inside the run's time (measured: one device capped at 100 MB/s wrote
    92.3 MB/s with end_fsync, 101.1 without; 860 MB/s wrote 696; bonnie++'s block write 186-190 MB/s of 200 backed
    under /tmp, 202-205 under /dev/shm), so a test that compares a write with its cap must not be backed there.
    ``fallback`` where /dev/shm lacks 8 GiB. Removed afterwards, once nothing is attached to it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shutil.disk_usage(shm).free < 8 * 2**30:
        yield fallback
        return
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="flashscale-test-"))
    try:
        yield folder
    finally:
        attached = loop_devices_backed_under(folder)
        assert attached == [], f"loop devices still backed under {folder}: {attached}"
        shutil.rmtree(folder)


@pytest.fixture
def fast_backing(tmp_path):
    """``shm_folder`` for one test."""
    with shm_folder(tmp_path) as folder:
        yield folder


def mounts_under(prefix: str) -> list[str]:
    return [line for line in Path("/proc/mounts").read_text().splitlines() if prefix in line.split()[1]]


def leftover_mounts(campaign_dir: Path) -> list[str]:
    """Mount points still mounted among the fio targets (``directory=``) of a campaign's job files. Only this
    campaign's own mounts are looked at, so other runs on the machine cannot make a test fail or pass."""
    targets = {line.split("=", 1)[1].strip() for job in Path(campaign_dir).glob("raw/**/job.fio")
               for line in job.read_text().splitlines() if line.startswith("directory=")}
    assert targets, f"no fio job file under {campaign_dir}: nothing to check"
    mounted = {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()}
    return sorted(t for t in targets if t in mounted)


@pytest.fixture(scope="session", autouse=True)
def bystander(tmp_path_factory):
    """A loop device made outside flashscale before the first test; after the whole suite it must still be attached
    to the same backing file with the same contents. None where loop devices cannot be made."""
    if loop_support_problem() is not None:
        yield None
        return
    backing = tmp_path_factory.mktemp("bystander") / "bystander.img"
    backing.write_bytes(os.urandom(1 << 20) * 4)
    path = subprocess.run(["losetup", "--find", "--show", str(backing)], check=True, capture_output=True,
                          text=True).stdout.strip()
    before = sha256(path)
    yield {"path": path, "backing": str(backing), "sha256": before}
    try:
        assert loop_backing_file(path) == str(backing), f"bystander {path} no longer backs {backing}"
        assert sha256(path) == before, f"bystander loop device {path} changed during the test suite"
    finally:
        if loop_backing_file(path) == str(backing):  # never detach a device that is no longer ours
            subprocess.run(["losetup", "--detach", path], check=False)


def run_notebook(folder: Path, notebook: str, name: str, parameters: dict) -> tuple[Path, dict]:
    """``flashscale run`` of one notebook as campaign ``name`` with ``parameters``, its measurements under
    ``folder/data`` and its report under ``folder/reports``: the report's folder and the numbers it recorded."""
    import yaml

    from flashscale import cli
    from flashscale.publish import report

    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"campaign": name, "notebooks": [notebook],
                                    "parameters": {"DATA_DIR": str(folder / "data"), **parameters}}))
    assert cli.main(["run", str(path), "--reports", str(folder / "reports")]) == 0
    out = folder / "reports" / name
    return out, report.read_record(out / f"{notebook}.ipynb")


def stored_campaign(folder: Path) -> campaign.CampaignResult:
    """The finished campaign in ``folder`` as ``campaign.run`` gave it to the notebook that ran it: its table (the
    rows it kept), its folder, its backend and its notes."""
    rows, torn = campaign_folder.read_rows(folder)
    assert torn is None, f"{folder}: a torn line in its rows"
    backend = json.loads((folder / "campaign.json").read_text())["environment"]["backend"]
    return campaign.CampaignResult(results.to_frame(rows), folder, backend,
                                   json.loads((folder / "notes.json").read_text()))


def our_cgroups() -> list[Path]:
    """The throttled cgroups this process's campaign recorded in its manifests (none of another's): a test that holds
    a device back mid-campaign writes its caps there (test_stall_loop, test_drift_loop)."""
    found = []
    for path in manifest_dir().glob("flashscale-*.json"):
        record = json.loads(path.read_text())
        if record.get("pid") == os.getpid():
            found += [Path(c["path"]) for c in record.get("created", []) if c.get("kind") == "cgroup"]
    return found


def run_beside(spec: campaign.CampaignSpec, act, data: Path) -> tuple[campaign.CampaignResult, list[str]]:
    """``spec``'s campaign, run while ``act(data, done, said)`` acts on the machine from a thread of its own (holds a
    device back, lowers a cap), told by ``done`` when the campaign ended: the result, and what ``act`` said."""
    done, said = threading.Event(), []
    actor = threading.Thread(target=act, args=(data, done, said), daemon=True)
    actor.start()
    try:
        result = campaign.run(spec, progress=False)
    finally:
        done.set()
        actor.join(timeout=30)
    return result, said


def cgroups_left(campaign_dir: Path) -> list[str]:
    """The throttled cgroups a campaign's runs went in (their env.json) that still exist: none once it is torn down."""
    procs = {p for env in Path(campaign_dir).glob("raw/**/env.json") for p in json.loads(env.read_text())["cgroup"]}
    assert procs, f"no run of {campaign_dir} ran in a throttled cgroup: nothing to check"
    return sorted(p for p in procs if Path(p).parent.exists())


# notebooks/09_applications at the least each workload's test needs (tests/test_bonnie_loop.py, test_pgbench_loop.py,
# test_transfer_loop.py, test_applications_notebook.py): the three layouts of 2 devices capped at 200 MB/s; fio's
# write and read (each application's tax is against them) at 2 jobs; bonnie++ at 1 and 2 processes of 64 MiB and
# 1,024 files (its numbers land in the table, timed or +++++ with the reason); pgbench at scale 1, 1 and 2 clients
# of 2 s; the transfer of 48 files of 8 MiB at 1 and 4 streams (a copy long enough to hold to its truth).
APPLICATIONS = dict(DEVICES=2, DEVICE_SIZE=2**30, CAP_READ_BPS=200_000_000, CAP_WRITE_BPS=200_000_000,
                    LAYOUTS=["single", "jbod", "btrfs-raid0"], RW=["write", "read"], BS=[2**20], NUMJOBS=[2],
                    REPETITIONS=1, RUNTIME_S=2, RAMP_S=0, FILE_SIZE=32 * 2**20,
                    BONNIE_PROCESSES=[1, 2], BONNIE_FILE_MIB=64, BONNIE_FILES_K=1,
                    PGBENCH_SCALES=[1], PGBENCH_CLIENTS=[1, 2], PGBENCH_DURATION_S=2,
                    TRANSFER_FILES=48, TRANSFER_FILE_MIB=8, TRANSFER_STREAMS=[1, 4], PROGRESS=False)


@pytest.fixture(scope="session")
def applications(tmp_path_factory):
    """09_applications run once by ``flashscale run`` with ``APPLICATIONS`` on the emulated array, for every test of
    its workloads to read: (the campaign as campaign.run returned it, the report's folder, the recorded numbers).
    One campaign measures all three, as the notebook does, instead of one campaign each and the notebook again."""
    if ROOT_PROBLEM is not None:
        pytest.skip(f"needs root, loop devices and block throttling: {ROOT_PROBLEM}")
    folder = tmp_path_factory.mktemp("applications")
    out, numbers = run_notebook(folder, "09_applications", "apps", APPLICATIONS)
    return stored_campaign(folder / "data" / "apps"), out, numbers


@pytest.fixture
def bed(tmp_path):
    """Two loop devices of the test's own, filled with random data, named by identity in a test bed file (the test
    bed campaign's tests and the recipe's)."""
    from test_guard_loop import Loops  # the loop devices a test makes and detaches itself

    loops = Loops(tmp_path)
    devices = [loops.make(size=512 * 2**20), loops.make(size=512 * 2**20)]
    path = tmp_path / "testbed.yaml"
    path.write_text("name: two-loops\ndevices:\n" + "".join(f'  - "{d.id}"\n' for d in devices))
    yield {"file": str(path), "devices": devices, "ids": [d.id for d in devices]}
    loops.close()


def labs_left() -> list[str]:
    """Lab folders, manifests and QEMU processes of the lab still there (the lab's own, by their names)."""
    left = [str(p) for p in Path("/dev/shm").glob("flashscale-vm-*")]
    left += [str(p) for p in Path(os.path.realpath("/tmp")).glob("flashscale-vm-*")]
    for manifest in manifest_dir().glob("flashscale-vm-*.json"):
        left.append(str(manifest))
    return left


@pytest.fixture
def no_lab_before():
    assert labs_left() == [], "an earlier lab was left behind; flashscale reap undoes it"
    yield
    assert labs_left() == []


# ---- the guest's own test modules, in one lab -------------------------------------------------------------------

GUEST_SUITES = ("tests/vm_guest/guest_guard.py", "tests/vm_guest/guest_layouts.py")  # the guard's first: it wants
# every device free and unsigned, and leaves them so; the layouts' builds come after it
LIST_IDENTITIES = ("import json, sys; from flashscale.system.devices import System; s = System(); "
                   "json.dump({s.identity_of(n): n for n in s.block_names() if n.startswith('nvme')}, "
                   "open(sys.argv[1], 'w'))")


@pytest.fixture(scope="session")
def guest_suites(tmp_path_factory):
    """One VM lab of 2 NVMe devices booted twice (issue 49: one boot for several checks). The first boot lists which
    path carries which identity, then runs the guest's test modules (``GUEST_SUITES``) in one pytest; the second,
    with the controllers attached in the reverse order, lists them again. The lab is gone when this returns; the
    tests that read it (test_vm's guard, test_layout_descriptors' layouts) each hold their own module's results."""
    assert labs_left() == [], "an earlier lab was left behind; flashscale reap undoes it"
    root = tmp_path_factory.mktemp("guest-suites")
    share = root / "flashscale-share"
    share.mkdir()
    python = ["env", "PYTHONDONTWRITEBYTECODE=1", sys.executable]
    script = ("import subprocess, sys; "
              f"subprocess.run([sys.executable, '-c', {LIST_IDENTITIES!r}, {str(share / 'first.json')!r}], "
              "check=True); "
              f"sys.exit(subprocess.run([sys.executable, '-m', 'pytest', *{list(GUEST_SUITES)!r}, "
              f"'-p', 'no:cacheprovider', '-q', '-rs', '--junitxml', {str(share / 'guest.xml')!r}]).returncode)")
    with vm.Lab(vm.VmSpec(devices=2, device_size=512 * 2**20, name="vm-guard")) as lab:
        ids = lab.identities
        command = ["env", f"FLASHSCALE_VM_DEVICES={json.dumps(ids)}", "IMSM_NO_PLATFORM=1", *python[1:], "-c",
                   script]
        first = lab.boot(command, share, rwdirs=[root], cwd=project_root(), timeout_s=1200)
        output = first.output.read_text()  # read before the lab removes its logs
        second = lab.boot([*python, "-c", LIST_IDENTITIES, str(share / "second.json")], share, rwdirs=[root],
                          cwd=project_root(), order=[1, 0], timeout_s=300)
        second_output = second.output.read_text()
    assert labs_left() == []
    cases: dict[str, list[tuple[str, str]]] = {suite: [] for suite in GUEST_SUITES}
    if (share / "guest.xml").exists():
        for case in ElementTree.parse(share / "guest.xml").iter("testcase"):
            suite = case.get("classname", "").replace(".", "/") + ".py"  # tests.vm_guest.guest_guard, a module's
            status = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            cases.setdefault(suite, []).append((case.get("name", ""), status))
    return {"ids": ids, "first": first, "output": output, "second": second, "second_output": second_output,
            "share": share, "cases": cases}
