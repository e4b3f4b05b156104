"""The VM lab: a virtual machine with a real kernel (md, device-mapper, NVMe) that this machine's kernel may lack.

    with Lab(VmSpec(devices=4, device_size=2**30), teardown_dir) as lab:
        lab.identities                       # the NVMe identities the guest will read, chosen here
        boot = lab.boot(argv, log_file, rwdirs=[results_dir])   # one boot: runs argv as root in the guest
        boot.returncode, boot.seconds, lab.facts

The guest is virtme-ng's (``vng``): the host's kernel package (``/boot/vmlinuz-*``) booted by QEMU over the host's
own files, read-only but for the ``rwdirs``; ``/run`` and ``/var/tmp`` are the guest's own (``/tmp`` an overlay of
the host's), and a checkout, Python environment or ``rwdir`` under them is mounted at its own path there
(``system.vmlab.mounts``). Its NVMe devices are sparse backing files of the lab's own, one QEMU NVMe controller each
with a serial the lab chose, so the identity the guest reads (``System.identity_of``: the namespace's ``wwid``) is
one the host can predict (``identity``). The guest has no network (QEMU's ``-net none``).

KVM is used when a short probe boots with it (``probe_accelerator``); otherwise QEMU emulates the CPU (TCG), slower
but always there; ``facts`` say which, with QEMU's version and the kernel booted. Everything the lab makes (its
folder, the backing files, every QEMU process with its pid and start time) is recorded in its teardown before it
exists: a run that dies leaves a manifest that ``flashscale reap`` undoes.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence, TextIO

from .. import processes
from ..commands import Runner
from ..devices import System
from ..teardown import Built, Teardown
from ..undo import OWN_FILE_PREFIX as OWN_PREFIX, make_scratch
from .mounts import HOST_SHARE, GuestMounts, guest_mounts
from ...errors import ConfigError, FlashscaleError, UnsupportedError
from ...layouts import kernel_modules, tools as layout_tools
from ...paths import project_root

QEMU = "qemu-system-x86_64"
VNG = "vng"
MODEL = "QEMU NVMe Ctrl"  # what QEMU's NVMe controller reports as its model
QEMU_VENDOR = 0x1B36      # Red Hat's PCI vendor id, QEMU's NVMe controller's
ACCELERATORS = ("auto", "kvm", "tcg")
PROBE_S = 45.0            # a KVM boot takes seconds; one that has not finished by then is taken as hung
BOOT_MARK = "flashscale-guest-up"  # printed by the guest before the command: the boot worked
POLL_S = 0.5             # how often a waiting host looks at the VM and its console
CONSOLE_LOG, OUTPUT_LOG, COMMAND_FILE = "flashscale-console.log", "flashscale-output.log", "flashscale-command.sh"
BOOT_S = 300.0            # a TCG boot takes 15-35 s on 2 cores; one that has not reached its command by then will not
PANIC_MARKS = ("Kernel panic", "PANIC: early exception", "kernel BUG at")
CONSOLE_TAIL = 25         # lines of the console an error quotes
GUEST_MODULES = kernel_modules()  # what the layouts flashscale builds need, as modules of Debian's kernel
IMSM_NOTE = ("In the VM, mdadm builds IMSM (Intel RST) metadata with IMSM_NO_PLATFORM=1, its own switch for "
             "testing without an Intel RST platform: the on-disk format is IMSM's, the firmware's part is absent.")

# what the lab needs on the host: (program, the Debian package or pip install that brings it); the guest runs the
# host's programs, so the layouts' (mdadm, lvm: ``layouts.tools``) and nvme-cli are needed here too
HOST_TOOLS = ((QEMU, "apt-get install qemu-system-x86"), (VNG, "pip install virtme-ng, or make deps-vm"),
              ("busybox", "apt-get install busybox-static"),
              *((program, f"apt-get install {package}") for program, package in layout_tools()),
              ("nvme", "apt-get install nvme-cli"))


class VmError(FlashscaleError):
    """The virtual machine did not boot, or ended before the command in it did; the console's last lines say why."""


@dataclass(frozen=True)
class VmSpec:
    """A lab of ``devices`` NVMe devices of ``device_size`` bytes; the VM's memory and CPUs; the accelerator asked
    for (``auto``: KVM when a short probe boots, else TCG); ``name``: what the serials are derived from, so the same
    name gives the same identities on every boot and every run (a resumed campaign finds the devices it confirmed)."""

    devices: int = 4
    device_size: int = 2**30
    memory: str = "2G"
    cpus: int = 2
    accelerator: str = "auto"
    name: str = "lab"

    def __post_init__(self) -> None:
        for attr in ("devices", "device_size", "cpus"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"VM {attr}={value!r} must be a positive whole number")
        if self.devices > 32:
            raise ConfigError(f"VM devices={self.devices} is more than the 32 NVMe controllers the lab attaches")
        if self.accelerator not in ACCELERATORS:
            raise ConfigError(f"VM_ACCEL={self.accelerator!r} is not one of {', '.join(ACCELERATORS)}")
        if not re.fullmatch(r"[1-9][0-9]*[MG]", str(self.memory)):
            raise ConfigError(f"VM memory={self.memory!r} must be a size such as 2G or 1536M")


def serial(spec: VmSpec, index: int) -> str:
    """The serial of device ``index``: ``fs``, a digest of the lab's name, the index (QEMU allows 20 characters)."""
    return f"fs{hashlib.sha256(spec.name.encode()).hexdigest()[:10]}{index:02d}"


def identity(serial_number: str, nsid: int = 1) -> str:
    """The identity ``System.identity_of`` reads in the guest for a QEMU NVMe namespace with this serial: the
    kernel's ``wwid``, built from the vendor id, the serial and the model (no EUI-64 or NGUID is reported)."""
    return f"wwid:nvme.{QEMU_VENDOR:04x}-{serial_number.encode().hex()}-{MODEL.encode().hex()}-{nsid:08x}"


def vng_path(runner: Runner) -> str | None:
    """virtme-ng's ``vng``: beside this Python (a venv's bin, not always on PATH) or on PATH; None if neither."""
    beside = Path(sys.executable).parent / VNG
    return str(beside) if beside.is_file() else runner.which(VNG)


BOOT = Path("/boot")  # where Debian's kernel packages put their images


def kernel_image(boot: Path = BOOT) -> Path:
    """The newest kernel image of the host's kernel packages; UnsupportedError with the apt command if none."""
    images = sorted(boot.glob("vmlinuz-*"), key=lambda p: [int(n) for n in re.findall(r"\d+", p.name)])
    if not images:
        raise UnsupportedError(f"no kernel image in {boot} for the VM lab: apt-get install linux-image-amd64")
    return images[-1]


def prerequisites_problem(system: System, runner: Runner, boot: Path = BOOT) -> str | None:
    """Why the lab cannot run here (not root, a program missing, no kernel image in ``boot`` or its modules), or
    None."""
    if system.euid() != 0:
        return "the VM lab needs root (its guest runs flashscale as root on the VM's devices)"
    for program, install in HOST_TOOLS:
        if (vng_path(runner) if program == VNG else runner.which(program)) is None:
            return f"the VM lab needs {program}: {install}"
    try:
        image = kernel_image(boot)
    except UnsupportedError as exc:
        return str(exc)
    release = image.name.removeprefix("vmlinuz-")
    if not Path("/lib/modules", release).is_dir():
        return f"the kernel {image} has no modules in /lib/modules/{release}: apt-get install linux-image-{release}"
    return None


@dataclass(frozen=True)
class Boot:
    """One boot of the lab: the command's exit status, the seconds from start to end, the accelerator used."""

    returncode: int
    seconds: float
    accelerator: str
    output: Path   # what the command printed
    console: Path  # the kernel's console


@dataclass
class Lab(Built):
    """Context manager: the lab's folder and backing files, made on entry and removed on exit (``Teardown``)."""

    spec: VmSpec
    runner: Runner = field(default_factory=Runner)
    system: System | None = None
    manifests: Path | None = None
    boot_dir: Path = BOOT  # the kernel images, one of which the guest boots (``kernel_image``)
    workdir: Path | None = field(default=None, init=False)
    tool_tmp: Path | None = field(default=None, init=False)  # vng's TMPDIR: what it leaves when killed goes too
    teardown: Teardown | None = field(default=None, init=False)
    accelerator: str | None = field(default=None, init=False)
    notes: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.system = self.system or System(runner=self.runner)

    @property
    def serials(self) -> list[str]:
        return [serial(self.spec, i) for i in range(self.spec.devices)]

    @property
    def identities(self) -> list[str]:
        return [identity(s) for s in self.serials]

    def _build(self) -> None:
        problem = prerequisites_problem(self.system, self.runner, self.boot_dir)
        if problem:
            raise UnsupportedError(problem)
        self.workdir = Path(tempfile.mkdtemp(prefix="flashscale-vm-", dir=_backing_root(self.spec, self.system)))
        self.start_teardown(self.workdir.name).record("dir", path=str(self.workdir))
        for index in range(self.spec.devices):
            backing = self.workdir / f"flashscale-nvme{index}.img"
            self.teardown.record("file", path=str(backing))
            with open(backing, "xb") as fh:
                fh.truncate(self.spec.device_size)
        self.tool_tmp = make_scratch(self.workdir, "vng-tmp", self.teardown)

    def choose_accelerator(self) -> str:
        """KVM or TCG, probed once per lab (``probe_accelerator``); why, in ``notes``."""
        if self.accelerator is None:
            self.accelerator, note = probe_accelerator(self)
            self.notes.append(note)
        return self.accelerator

    @property
    def facts(self) -> dict:
        """What a row and ``campaign.json`` say of the VM: QEMU's version, the kernel, the accelerator."""
        qemu = self.runner.run([QEMU, "--version"]).stdout.splitlines()[0].strip()
        return {"vm": True, "accelerator": self.accelerator, "qemu": qemu, "vm_kernel_image": str(kernel_image(self.boot_dir)),
                "vm_memory": self.spec.memory, "vm_cpus": self.spec.cpus, "vm_devices": self.spec.devices}

    def qemu_options(self, order: Sequence[int] | None = None) -> list[str]:
        """One ``--qemu-opts`` value per device: its backing file as a raw drive and an NVMe controller with the
        lab's serial; ``order`` is the order in which the controllers are attached (the guest numbers them
        ``nvme0``, ``nvme1``... in that order), default 0, 1, ... N-1."""
        order = list(range(self.spec.devices)) if order is None else list(order)
        if sorted(order) != list(range(self.spec.devices)):
            raise ConfigError(f"order={order} is not an order of the lab's {self.spec.devices} devices")
        return [f"-drive file={self.workdir / f'flashscale-nvme{i}.img'},if=none,id=fsnvme{i},format=raw,"
                f"cache=writeback,discard=unmap -device nvme,serial={self.serials[i]},drive=fsnvme{i}"
                for i in order]

    def mounts(self, rwdirs: Sequence[Path], cwd: Path) -> GuestMounts:
        """What the guest sees of the host (``guest_mounts``): ``rwdirs`` written; the checkout, this Python's
        environment and ``cwd`` mounted where it would not see them; Python's installation, the venv and the
        checkout, which no boot writes, read through the guest's page cache."""
        python = [Path(sys.base_prefix), Path(sys.prefix)]
        return guest_mounts([project_root(), Path(sys.prefix), cwd], rwdirs, [Path("/usr"), *python, project_root()])

    def script(self, command: Sequence[str], mounts: GuestMounts, output: Path | None = None) -> str:
        """The guest's script: the mounts' first steps (a failed one ends it before ``BOOT_MARK``), then
        ``BOOT_MARK`` and ``command``, their output to ``output`` (a file the guest may write). (QEMU reopens the
        host's stdout for the guest's, where the console goes too: one would overwrite the other.)"""
        to = f" >> {shlex.quote(str(output))} 2>&1" if output else ""
        first = "".join(f"{step} || exit 1\n" for step in mounts.first)
        return f"#!/bin/sh\n{first}echo {BOOT_MARK}{to}\nexec {shlex.join(command)}{to}\n"

    def argv(self, script: Path | str, mounts: GuestMounts, cwd: Path, kvm: bool,
             order: Sequence[int] | None) -> list[str]:
        """vng's argv, which runs the file ``script`` (in a folder the guest writes; ``boot`` writes it) with
        ``sh`` from where the guest finds it at boot (the kernel's command line carries it, and holds 2 KiB), or a
        ``str`` as the shell command itself."""
        vng = vng_path(self.runner) or VNG  # vng starts virtme-run from its own folder: that folder goes on PATH
        path = os.pathsep.join([str(Path(vng).parent), os.environ.get("PATH", os.defpath)])
        return ["env", f"TMPDIR={self.tool_tmp}", f"PATH={path}", vng, "--run", str(kernel_image(self.boot_dir)), "--verbose",
                *([] if kvm else ["--disable-kvm"]), "--memory", self.spec.memory, "--cpus", str(self.spec.cpus),
                *mounts.options, f"--cwd={cwd}",
                *[f"--qemu-opts={o}" for o in [*self.qemu_options(order), HOST_SHARE]],
                "--exec", script if isinstance(script, str) else f"sh {shlex.quote(str(mounts.at_boot(script)))}"]

    def boot(self, command: Sequence[str], log_dir: Path, *, rwdirs: Sequence[Path] = (), cwd: Path | None = None,
             order: Sequence[int] | None = None, timeout_s: float | None = None, echo: TextIO | None = None) -> Boot:
        """Boot the VM, run ``command`` in it as root (in ``cwd``, default this process's), wait until it ends.
        ``log_dir`` (in one of ``rwdirs``) gets the kernel's console (``CONSOLE_LOG``) and the command's output
        (``OUTPUT_LOG``, also copied to ``echo`` as it comes), each recorded in the teardown. VmError, with the
        console's last lines, when the guest did not boot or was stopped by ``timeout_s``."""
        if self.teardown is None:
            raise ConfigError("the lab is not built: use it as a context manager")
        self.choose_accelerator()
        if not Path(log_dir).name.startswith(OWN_PREFIX):
            raise ConfigError(f"log_dir {str(log_dir)!r} must be a folder named {OWN_PREFIX}*: the lab records its logs "
                              "there, and removes only files of ours from folders of ours")
        console, output, script = (Path(log_dir) / name for name in (CONSOLE_LOG, OUTPUT_LOG, COMMAND_FILE))
        for path in (console, output, script):
            self.teardown.record("file", path=str(path))
            path.write_bytes(b"")
        cwd = cwd or Path.cwd()
        mounts = self.mounts([Path(d) for d in rwdirs], cwd)
        script.write_text(self.script(command, mounts, output))
        argv = self.argv(script, mounts, cwd, self.accelerator == "kvm", order)
        started = time.monotonic()
        process = processes.start(argv, self.teardown, console)
        returncode, why = _wait(process, timeout_s, output, echo, lambda: _not_booting(console, output, started))
        seconds = time.monotonic() - started
        if returncode is None:
            raise VmError(f"the VM {why} and was stopped; its console's last lines:\n{_tail(process.output())}")
        if BOOT_MARK not in output.read_text(errors="replace"):
            raise VmError(f"the VM did not boot (exit status {returncode}); its console's last lines:\n"
                          f"{_tail(process.output())}")
        return Boot(returncode, seconds, self.accelerator, output, console)


def _backing_root(spec: VmSpec, system: System) -> Path:
    """tmpfs (``/dev/shm``) when it has room for every backing file twice over, else the system temp dir."""
    shm = system.dev / "shm"
    if (system.free_bytes(shm) or 0) > 2 * spec.devices * spec.device_size:
        return shm
    return Path(tempfile.gettempdir())


def _wait(process: processes.Process, timeout_s: float | None, output: Path | None = None,
          echo: TextIO | None = None, trouble: Callable[[], str | None] = lambda: None) -> tuple[int | None, str]:
    """The exit status of ``process``, its new output copied to ``echo`` as it comes; ``(None, why)`` when it ran
    past ``timeout_s`` or ``trouble`` said why it will not end well (it is then stopped, group and all)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    shown = 0
    try:
        while True:
            try:
                returncode = process.popen.wait(timeout=POLL_S)
            except subprocess.TimeoutExpired:
                returncode = None
            shown = _echo(output, shown, echo)
            if returncode is not None:
                return returncode, ""
            why = trouble() or (f"did not finish within {timeout_s:.0f} s"
                                if deadline is not None and time.monotonic() > deadline else None)
            if why:
                process.stop()
                return None, why
    except BaseException:  # Ctrl-C: the VM goes with the run
        process.stop()
        raise


def _not_booting(console: Path, output: Path, started: float) -> str | None:
    """Why a guest will not get to its command: its kernel panicked (QEMU then waits for ever), or it has not
    started the command ``BOOT_S`` seconds after QEMU did; None while it may still."""
    text = console.read_text(errors="replace") if console.exists() else ""
    panic = next((line for line in text.splitlines() if any(m in line for m in PANIC_MARKS)), None)
    if panic:
        return f"kernel panicked ({panic.strip()})"
    if time.monotonic() - started > BOOT_S and BOOT_MARK not in output.read_text(errors="replace"):
        return f"did not start its command within {BOOT_S:.0f} s of booting"
    return None


def _echo(log_file: Path | None, shown: int, echo: TextIO | None) -> int:
    """Copy what ``log_file`` gained since byte ``shown`` to ``echo``; the new count."""
    if echo is None or log_file is None or not log_file.exists():
        return shown
    with open(log_file, "rb") as fh:
        fh.seek(shown)
        new = fh.read()
    echo.write(new.decode(errors="replace"))
    echo.flush()
    return shown + len(new)


def _tail(console: str) -> str:
    return "\n".join(console.rstrip().splitlines()[-CONSOLE_TAIL:]) or "(the console printed nothing)"


def probe_accelerator(lab: Lab) -> tuple[str, str]:
    """``("kvm" | "tcg", why)``: KVM when the spec allows it, /dev/kvm exists and a boot with it runs ``true``
    within ``PROBE_S`` seconds; else TCG. A probe that hangs is stopped at that bound."""
    if lab.spec.accelerator == "tcg":
        return "tcg", "The VM ran under TCG (software emulation), as VM_ACCEL asked."
    if not (lab.system.dev / "kvm").exists():
        if lab.spec.accelerator == "kvm":
            raise UnsupportedError("VM_ACCEL='kvm' but this machine has no /dev/kvm")
        return "tcg", "The VM ran under TCG (software emulation): this machine has no /dev/kvm."
    log_file = lab.workdir / "flashscale-kvm-probe.log"
    lab.teardown.record("file", path=str(log_file))
    argv = lab.argv("true", GuestMounts((), ()), Path("/"), True, None)
    process = processes.start(argv, lab.teardown, log_file)
    returncode, _ = _wait(process, PROBE_S)
    if returncode == 0:
        return "kvm", "The VM ran with KVM (a probe boot with it succeeded)."
    why = (f"a probe boot with KVM did not finish within {PROBE_S:.0f} s and was stopped" if returncode is None
           else f"a probe boot with KVM failed (exit status {returncode}: {_tail(process.output()).splitlines()[-1]})")
    if lab.spec.accelerator == "kvm":
        raise UnsupportedError(f"VM_ACCEL='kvm' but {why}")
    return "tcg", f"The VM ran under TCG (software emulation, CPU-bound): {why}."


def prepare_guest(runner: Runner, system: System) -> list[str]:
    """Inside the guest: load md and device-mapper, and let child cgroups cap block I/O (``io`` in the cgroup v2
    root's ``subtree_control``, checked), so the layouts and the caps work as on a real machine. Returns what
    was done, for the notes."""
    for module in GUEST_MODULES:
        runner.run(["modprobe", module])
    done = [f"loaded {', '.join(GUEST_MODULES)}"]
    control = system.sys / "fs" / "cgroup" / "cgroup.subtree_control"
    if control.exists() and "io" not in control.read_text().split():
        control.write_text("+io")
        if "io" not in control.read_text().split():
            raise UnsupportedError(f"the guest kernel did not enable the io controller in {control}")
        done.append("enabled the io controller for child cgroups")
    return done
