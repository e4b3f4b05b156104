"""``make test-fresh-root``: the README's ``make test`` where nothing is installed, in a minimal Debian 12 root built
from Debian's packages alone, so every package the suite needs is installed by the Makefile or not at all.

    python3 scripts/fresh_root.py [--repo DIR] [--cache DIR] [-- COMMAND...]     (default COMMAND: make test)

The root (mmdebstrap, ``--variant=important``: Debian's required and important packages, what every Debian install
has, ``losetup`` and ``ip`` among them; plus git, make, python3 and ca-certificates, what the README's reader has
to clone and type ``make``) is built in a scratch folder of ours (``undo.make_scratch``: recorded in a manifest
before it is made, removed with everything in it on success, error, Ctrl-C and by ``flashscale reap``). The
repository is cloned inside (its committed tree: what CI tests), and COMMAND runs there as root, chrooted, in a
mount namespace of its own (``unshare --mount``) where the running kernel's ``/dev``, ``/proc`` and ``/sys`` (the
cgroup trees with it) are bound in; network namespaces are the kernel's and need nothing more. Those mounts live
and die with that namespace: the host never sees them, and a scratch folder is never removed while anything is
mounted in it (``undo``'s scratch refuses, and the manifest stays for ``flashscale reap``).

What the root takes from this machine is only how its network is reached: the resolver, the CA certificates this
machine trusts (``/usr/local/share/ca-certificates``: the registries are reached through them here) and the ``PIP_*``
settings of the environment. Why mmdebstrap, not debootstrap or systemd-nspawn: it builds a root from Debian's
archive in about a minute, as root or not, with hooks to carry the package cache in and out; systemd-nspawn would
also boot a container manager and a private /dev without loop devices. The apt and pip caches persist between runs
in ``--cache`` (root's alone, mode 0700), so a run downloads only what changed.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from flashscale.system import private  # noqa: E402  (the system layer: the standard library only)
from flashscale.system.commands import Runner  # noqa: E402
from flashscale.system.devices import System  # noqa: E402
from flashscale.system.teardown import Teardown, manifest_dir  # noqa: E402
from flashscale.system.undo import make_scratch  # noqa: E402

SUITE = "bookworm"
SOURCES = (f"deb http://deb.debian.org/debian {SUITE} main",
           f"deb http://deb.debian.org/debian {SUITE}-updates main",
           f"deb http://deb.debian.org/debian-security {SUITE}-security main")
VARIANT = "important"
INCLUDE = ("git", "make", "python3", "ca-certificates")
HOST_CAS = Path("/usr/local/share/ca-certificates")
CACHE = Path("/var/cache/flashscale/fresh-root")
CLONE = Path("/root/flashscale")  # inside the root
FLASHSCALE = CLONE / ".venv/bin/flashscale"
KEPT_ENV = ("PIP_DEFAULT_TIMEOUT", "PIP_CERT", "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_INDEX_URL", "CI",
            "HALF_CPU_TESTS")


def private_folder(path: Path) -> Path:
    """``path``, made when missing, refused (``private.owned``) unless it is this user's folder of mode 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return private.owned(path)


def build(root: Path, cache: Path) -> None:
    """The Debian root in ``root``, its downloaded packages carried in from ``cache`` and out again."""
    apt = private_folder(cache / "apt")
    cas = sorted(HOST_CAS.glob("*.crt")) if HOST_CAS.is_dir() else []
    hooks = [f"--setup-hook=mkdir -p \"$1/var/cache/apt/archives\"",
             f"--setup-hook=sync-in {apt} /var/cache/apt/archives",
             f"--customize-hook=sync-out /var/cache/apt/archives {apt}"]
    if cas:
        hooks += [f"--customize-hook=copy-in {shlex.join(map(str, cas))} {HOST_CAS}",
                  "--customize-hook=chroot \"$1\" update-ca-certificates"]
    run(["mmdebstrap", f"--variant={VARIANT}", f"--include={','.join(INCLUDE)}",
         "--aptopt=Acquire::Check-Valid-Until \"false\"", *hooks, SUITE, str(root), *SOURCES])


def clone(repo: Path, root: Path) -> None:
    """The repository's committed tree, cloned inside the root (a copy: nothing links back to ``repo``)."""
    run(["git", "clone", "--quiet", "--no-hardlinks", str(repo), str(root / CLONE.relative_to("/"))])


def inside(root: Path, cache: Path, command: list[str]) -> int:
    """``command`` run as root in ``root``'s clone, chrooted, in a mount namespace of its own; its exit status."""
    pip = private_folder(cache / "pip")
    apt = cache / "apt"
    (root / "etc/resolv.conf").write_bytes(Path("/etc/resolv.conf").read_bytes())
    binds = [("/dev", "dev"), ("/proc", "proc"), ("/sys", "sys"), (str(pip), "root/.cache/pip"),
             (str(apt), "var/cache/apt/archives")]
    # the root bound on itself first: a machine's / is a mount (its mountinfo names "/"), a folder chrooted into is not
    steps = [f"mount --bind {shlex.quote(str(root))} {shlex.quote(str(root))}"]
    steps += [f"mkdir -p {shlex.quote(str(root / to))} && mount --rbind {shlex.quote(src)} {shlex.quote(str(root / to))}"
              for src, to in binds]
    env = {"HOME": "/root", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "LANG": "C.UTF-8", "TERM": "dumb", **{k: os.environ[k] for k in KEPT_ENV if k in os.environ}}
    # then whatever a failed run left on this machine's kernel (loop devices, veths, cgroups: the root's manifests
    # name them, and go with the root) is reaped there, and the command's status is the run's
    after = f"status=$?; if [ -x {FLASHSCALE} ]; then {FLASHSCALE} reap >&2 || status=1; fi; exit $status"
    chroot = ["chroot", str(root), "env", "-i", *(f"{k}={v}" for k, v in env.items()), "sh", "-c",
              f"cd {CLONE} && {shlex.join(command)}; {after}"]
    script = " && ".join([*steps, f"exec {shlex.join(chroot)}"])
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script]).returncode


def run(argv: list[str]) -> None:
    print("+", shlex.join(argv), flush=True)
    subprocess.run(argv, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--cache", type=Path, default=CACHE, help="apt and pip caches kept between runs")
    parser.add_argument("--parent", type=Path, default=Path("/var/tmp"), help="where the root's folder is made")
    parser.add_argument("command", nargs="*", default=["make", "test"])
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("make test-fresh-root needs root (a chroot, and the suite's loop devices)")
    for program in ("mmdebstrap", "unshare", "chroot", "git"):
        if Runner().which(program) is None:
            raise SystemExit(f"make test-fresh-root needs {program}: apt-get install mmdebstrap")
    runner = Runner()
    system = System(runner=runner)
    teardown = Teardown(manifest_dir() / f"flashscale-fresh-root-{os.getpid()}.json", runner, system)
    started = time.monotonic()
    try:
        scratch = make_scratch(args.parent, "fresh-root", teardown, mode=0o700)
        root = scratch / "root"
        cache = private_folder(args.cache)
        build(root, cache)
        built = time.monotonic()
        clone(args.repo.resolve(), root)
        code = inside(root, cache, args.command)
        print(f"fresh root: built in {built - started:.0f} s; {shlex.join(args.command)} exited {code} after "
              f"{time.monotonic() - built:.0f} s", flush=True)
        return code
    finally:  # the scratch folder is not removed while anything is mounted in it (undo refuses: the manifest stays)
        teardown.close()


if __name__ == "__main__":
    sys.exit(main())
