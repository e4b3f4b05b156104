"""The package's shape: the machine is read and commands are run only in ``flashscale.system``; the import layers
hold (import-linter's contract in pyproject.toml, run here as ``make test`` runs it)."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib" / "flashscale"
MACHINE_LAYER = LIB / "system"
MACHINE_PATHS = ("/proc", "/sys", "/dev/loop-control")
COMMAND_MODULES = {"subprocess", "pty", "multiprocessing"}
COMMAND_CALLS = {"system", "popen", "execv", "execvp", "execve", "spawnv", "spawnvp", "fork", "forkpty"}


def reaches_the_machine(source: str) -> list[str]:
    """Where ``source`` names a /proc or /sys path, imports a module that runs commands, or calls os.system & co."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(node.value == p or node.value.startswith(p + "/") for p in MACHINE_PATHS):
                found.append(f"line {node.lineno}: path {node.value!r}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in COMMAND_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in COMMAND_MODULES:
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
              and node.attr in COMMAND_CALLS):
            found.append(f"line {node.lineno}: os.{node.attr}")
    return sorted(found, key=lambda hit: int(hit.split()[1].rstrip(":")))


def test_the_scanner_sees_what_it_looks_for():
    source = 'import subprocess\nimport os\nP = "/proc/self/mountinfo"\nos.system("ls")\nQ = "/sys"\n'
    assert reaches_the_machine(source) == ["line 1: import subprocess", "line 3: path '/proc/self/mountinfo'",
                                           "line 4: os.system", "line 5: path '/sys'"]
    assert reaches_the_machine('X = "/system/of/mine"\n') == []
    # and it finds the machine layer's own reads, so an empty answer elsewhere means something
    assert reaches_the_machine((MACHINE_LAYER / "commands.py").read_text())
    assert any("path" in hit for hit in reaches_the_machine((MACHINE_LAYER / "devices.py").read_text()))


def test_only_the_machine_layer_reads_proc_and_sys_or_runs_commands():
    offenders = {}
    for path in sorted(LIB.rglob("*.py")):
        if MACHINE_LAYER in path.parents:
            continue
        hits = reaches_the_machine(path.read_text())
        if hits:
            offenders[str(path.relative_to(LIB))] = hits
    assert offenders == {}, f"outside flashscale.system: {offenders}"


def test_the_layer_contract_holds():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run([lint], capture_output=True, text=True, cwd=LIB.parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
