"""The command's manners: ``--version``, ``python -m flashscale``, -v and -q anywhere, shell completion, and
``--help`` that imports none of pandas, numpy or scipy (what made it take seconds). Each in a process of its own,
as a user runs it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.system import provenance

LIB = Path(cli.__file__).resolve().parents[2]
HEAVY = ("pandas", "numpy", "scipy")


def flashscale(*argv: str, cwd: Path | None = None, lib: Path = LIB, code: str | None = None):
    """``python -m flashscale ARGV`` (or ``python -c CODE ARGV``) with ``lib`` on the path: the finished process."""
    command = [sys.executable, *(["-c", code] if code else ["-m", "flashscale"]), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(lib)})


def test_python_m_flashscale_is_the_command():
    done = flashscale("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: flashscale ") and "analyze" in done.stdout


def test_version_names_the_package_and_the_checkout_s_commit():
    done = flashscale("--version")
    assert done.returncode == 0, done.stderr
    facts = provenance.software()
    assert done.stdout == f"flashscale {facts['flashscale']} ({provenance.commit_words(facts)})\n"
    if provenance.checkout() is not None and facts["commit"]:
        assert f"commit {provenance.short(facts['commit'])}" in done.stdout


def test_version_outside_a_checkout_says_there_is_no_commit(tmp_path: Path):
    shutil.copytree(LIB / "flashscale", tmp_path / "flashscale", ignore=shutil.ignore_patterns("__pycache__"))
    done = flashscale("--version", cwd=tmp_path, lib=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("flashscale ") and done.stdout.endswith(" (no git commit)\n")


# A subcommand whose run logs one line at each level, so that what the command's -v and -q let through is seen.
LOGS = ("import logging, sys\n"
        "from flashscale import cli\n"
        "from flashscale.cli import devices\n"
        "def said(args):\n"
        "    for level in ('info', 'warning', 'error'):\n"
        "        getattr(logging.getLogger('flashscale.test'), level)('logged at ' + level)\n"
        "    return 0\n"
        "devices.main = said\n"
        "sys.exit(cli.main(sys.argv[1:]))\n")


@pytest.mark.parametrize("argv, shown", [
    (["devices"], ["warning", "error"]),
    (["-v", "devices"], ["info", "warning", "error"]),
    (["devices", "-v"], ["info", "warning", "error"]),
    (["devices", "--verbose"], ["info", "warning", "error"]),
    (["-q", "devices"], ["error"]),
    (["devices", "-q"], ["error"]),
    (["--quiet", "devices", "--json"], ["error"]),
])
def test_verbose_and_quiet_are_taken_before_or_after_the_subcommand(argv, shown):
    done = flashscale(*argv, code=LOGS)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"flashscale.test: logged at {level}" for level in shown]


@pytest.mark.parametrize("argv", [["-v", "-q", "devices"], ["-v", "devices", "-q"], ["devices", "-q", "--verbose"]])
def test_verbose_and_quiet_together_are_bad_usage(argv):
    done = flashscale(*argv, code=LOGS)
    assert done.returncode == 2
    said = done.stderr.splitlines()[-1]
    assert said.endswith(("argument -q/--quiet: not allowed with argument -v/--verbose",
                          "argument -v/--verbose: not allowed with argument -q/--quiet")), done.stderr


# Every parser the command has, each asked for its help in turn, in one process: the first line each printed, then
# every module imported by then, one per line.
HELP = ("import contextlib, io, sys\n"
        "from flashscale import cli\n"
        "for argv in [['--help']] + [[name, '--help'] for name in cli.SUBCOMMANDS]:\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "        cli.main(argv)\n"
        "    print(out.getvalue().splitlines()[0])\n"
        "print('\\n'.join(sorted(sys.modules)))\n")


def test_help_imports_none_of_pandas_numpy_or_scipy():
    done = flashscale(code=HELP)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    usages, modules = lines[:len(cli.SUBCOMMANDS) + 1], lines[len(cli.SUBCOMMANDS) + 1:]
    assert usages[0] == "usage: flashscale [-h] [--version] [-v | -q]", usages  # each help was printed
    shown = [u.partition(" [-h] [-v | -q]")[0] for u in usages[1:]]
    assert shown == [f"usage: flashscale {name}" for name in cli.SUBCOMMANDS], usages
    imported = {name.split(".")[0] for name in modules}
    assert "flashscale" in imported and not imported & set(HEAVY), sorted(imported & set(HEAVY))


@pytest.mark.parametrize("shell, says", [("bash", "complete -o nospace -o default -o bashdefault -F "
                                                   "_python_argcomplete flashscale"),
                                          ("zsh", "#compdef flashscale"), ("fish", "complete --command flashscale")])
def test_completion_prints_each_shell_s_script(shell, says):
    done = flashscale("completion", shell)
    assert done.returncode == 0, done.stderr
    assert says in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("line, offered", [("flashscale pl", ["plan"]), ("flashscale plan --form", ["--format"]),
                                           ("flashscale plan --format ", ["table", "csv", "json"]),
                                           ("flashscale devices -", ["--format", "--json", "--verbose", "--quiet"]),
                                           ("flashscale completion ", ["bash", "zsh", "fish"])])
def test_bash_completes_commands_options_and_choices(tmp_path, line, offered):
    """bash itself, with the script `flashscale completion bash` printed, asked what completes ``line``; the
    script runs the command (here a ``flashscale`` on the PATH that runs this checkout's)."""
    command = tmp_path / "flashscale"
    command.write_text(f"#!/bin/sh\nPYTHONPATH={LIB} exec {sys.executable} -m flashscale \"$@\"\n")
    command.chmod(0o755)
    words = line.split() + ([""] if line.endswith(" ") else [])
    script = (f'eval "$(flashscale completion bash)"\nCOMP_LINE="{line}"; COMP_POINT={len(line)}\n'
              f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
              '_python_argcomplete flashscale\nprintf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    got = [word.strip() for word in done.stdout.splitlines() if word.strip()]
    assert got == offered or (len(offered) > 1 and set(offered) <= set(got)), got  # options offered beside choices
