"""environment.yml for conda users, pinned to requirements.lock: ``make lock`` runs this after pip-compile.

Every package pyproject.toml names (the lock's entries "via flashscale (pyproject.toml)") at the lock's version,
``==``, under its conda-forge name (the lock's name in lower case: PyYAML is pyyaml); the ones conda-forge lacks
(``PIP_ONLY``) go under ``pip:``. Python is the minor version pip-compile resolved the lock with. Standard library
only, so it runs in the tools' venv.

    python scripts/environment_from_lock.py [--lock requirements.lock] [--out environment.yml]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "flashscale (pyproject.toml)"
# Not on conda-forge: installed by pip inside the conda environment, with why each is needed.
PIP_ONLY = {"virtme-ng": "the VM lab (make deps-vm installs QEMU, the kernel, mdadm, lvm2, nvme-cli)"}
HEADER = """\
# For conda users: the dependencies of pyproject.toml at the versions of requirements.lock. Written by
# scripts/environment_from_lock.py (make lock refreshes both): do not edit by hand. fio, xfsprogs and btrfs-progs
# come from the system's packages (e.g. `apt-get install fio xfsprogs btrfs-progs`; bonnie++ and postgresql for
# 09_applications, chromium for the browser test).
"""
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")
PYTHON = re.compile(r"pip-compile with Python (\d+\.\d+)")


class LockError(Exception):
    """The lock file cannot be read as pip-compile writes it."""


def read_lock(text: str) -> tuple[str, dict[str, str], set[str]]:
    """The lock's Python (major.minor), its pins {name: version} and the names pyproject.toml asks for directly."""
    python = PYTHON.search(text)
    if python is None:
        raise LockError("the lock does not say which Python pip-compile resolved it with (its header)")
    pins: dict[str, str] = {}
    direct: set[str] = set()
    name = None
    for line in text.splitlines():
        pin = PIN.match(line)
        if pin:
            name, version = pin.groups()
            pins[name] = version
        elif name and line.strip().lstrip("#").strip().removeprefix("via").strip() == PROJECT:
            direct.add(name)  # '# via flashscale (pyproject.toml)' or one line of a '# via' list
    if not direct:
        raise LockError(f"no entry of the lock is 'via {PROJECT}': was it compiled from pyproject.toml?")
    return python.group(1), pins, direct


def environment(python: str, pins: dict[str, str], direct: set[str]) -> str:
    """The text of environment.yml: conda's packages first, then pip's."""
    conda = [f"  - {name.lower()}=={pins[name]}" for name in sorted(direct, key=str.lower) if name not in PIP_ONLY]
    pip = [f"      - {name}=={pins[name]}  # {why}" for name, why in PIP_ONLY.items() if name in direct]
    lines = ["name: flashscale", "channels:", "  - conda-forge", "dependencies:", f"  - python={python}", *conda,
             "  - pip", "  - pip:", "      - -e .", *pip]
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=ROOT / "requirements.lock")
    parser.add_argument("--out", type=Path, default=ROOT / "environment.yml")
    args = parser.parse_args(argv)
    try:
        python, pins, direct = read_lock(args.lock.read_text())
    except (OSError, LockError) as exc:
        print(f"environment_from_lock: {args.lock}: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(environment(python, pins, direct))
    print(f"{args.out}: python {python} and {len(direct)} packages pinned as in {args.lock}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
