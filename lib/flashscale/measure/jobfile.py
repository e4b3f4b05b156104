"""A user's own fio job file, read with fio's rules, checked, and pointed at the layout under test.

Reading follows fio's job file syntax (its HOWTO, "Job file format"): ``[section]`` headers, ``key=value`` or
``key`` options, ``;`` and ``#`` comments (also at the end of a line), ``include FILE`` resolved relative to the
including file, ``${VAR}`` replaced from the environment. Every line is kept with its file and number.

Pointing a file at a layout (``JobFile.rewrite``) touches only these lines; every other line stays byte for byte
the user's, in the same order, comments included (an ``include`` line becomes a comment followed by the included
lines, so the written file stands alone):

- **target lines**: a ``directory=`` or ``filename=`` that names an absolute path is the file's own target (the
  device or mount point it was written for). It is replaced by the layout's targets, all of them in one line,
  ``directory=/m/0:/m/1`` or ``filename=/dev/a:/dev/b``: fio spreads a section's ``numjobs`` clones evenly over
  the directories, and each job's I/O over the devices. A job section with no target in scope gets that line
  right after its header. A relative ``filename=`` names a file inside the target directory and is kept.
- **file names**: the files fio makes in a target directory are named ``flashscale-...`` so that the layout's
  teardown, which removes only flashscale's own files (``system.undo.OWN_FILE_PREFIX``), removes them too: a
  relative ``filename=`` and a ``filename_format=`` get the prefix, and a job section with neither gets
  ``filename_format=flashscale-$jobname.$jobnum.$filenum`` (fio's default names, prefixed). Not on devices.
- **log lines**: a log name (``LOG_OPTIONS``) goes into the run's raw directory; a log set in ``[global]`` gets a
  name of its own in each job section, so the sections' logs do not overwrite each other.
- **swept axes** (``overrides``, e.g. ``{"numjobs": 4}``): every line setting the option takes the new value and a
  job section that never sets it gets it after its header. ``group_reporting=1`` is added the same way: each
  stonewall / new_group group is reported as one (``measure.jobrun`` makes one row of each).

Refused before anything runs (``refusals``, each a ``Refusal`` naming file, line and option): a path that would
escape the layout (a relative ``directory=``, which fio takes from its own working directory; a relative
``filename=`` with ``..`` or on device targets; ``opendir=`` or ``filename_format=`` outside the targets; an
``include`` outside the file's folder), a blank after ``=`` (fio keeps it in the value: ``bs= 8k`` is 8 bytes), a
raw device path in any other option (the guard approved only the layout's devices), options that run programs or change the machine (``REFUSED_OPTIONS``), an ``ioengine`` that is not a
plain built-in engine (``ENGINES``: ``external:`` and a path load code, ``exec`` runs programs).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping, Sequence

from ..errors import ConfigError
from ..system.undo import OWN_FILE_PREFIX
from .fio import is_device  # a layout's targets are devices or directories, classified as flashscale's own jobs do

# fio's aliases of the options this module reads (``fio --cmdhelp=OPTION`` prints them).
ALIASES = {"iomem": "mem", "blocksize": "bs", "readwrite": "rw", "wait_for_previous": "stonewall"}
TARGET_OPTIONS = ("directory", "filename")
LOG_OPTIONS = ("write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "write_iolog")
# Options naming a path that are not targets: each must stay inside the layout's target directories.
PATH_OPTIONS = ("opendir", "filename_format")
REFUSED_OPTIONS = {
    "exec_prerun": "runs a program before the job",
    "exec_postrun": "runs a program after the job",
    "allow_mounted_write": "lets fio write to a mounted device",
    "cgroup": "moves the jobs out of the cgroup that caps the layout's bandwidth",
    "ioscheduler": "changes the I/O scheduler of the machine's device",
    "replay_redirect": "replays I/O onto a device of its own",
    "read_iolog": "replays I/O onto the files its log names, outside the layout",
    "iolog": "replays I/O onto the files its log names, outside the layout",
}
# The built-in engines a job file may use: none runs a program, loads code or leaves the machine.
ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap", "splice",
           "null", "falloc", "ftruncate", "filecreate", "filestat", "filedelete", "dircreate", "dirstat",
           "dirdelete", "cpuio")
ENV_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Line:
    """One line of a job file as written, and what fio reads in it."""

    source: str  # the file it comes from
    number: int  # 1-based
    text: str  # as written, without the newline
    kind: str  # blank, comment, section, include, option
    section: str = ""  # the section it is in ("" before the first header)
    key: str = ""  # option name, lower case, aliases resolved; the section name for a header
    value: str | None = None  # the option's value with ${VAR} replaced, None for a flag


@dataclass(frozen=True)
class Refusal:
    source: str
    line: int
    option: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.option}: {self.reason}"


class JobFileError(ConfigError):
    """A job file flashscale will not run (or cannot read); the message names file, line and option."""

    def __init__(self, refusals: Sequence[Refusal]):
        self.refusals = tuple(refusals)
        super().__init__("; ".join(str(r) for r in self.refusals))


def _content(text: str) -> str:
    """A line as fio reads it: blanks stripped, an inline comment (``;`` or ``#``) cut off."""
    return re.split(r"[;#]", text, maxsplit=1)[0].strip()


def _classify(source: str, number: int, text: str, section: str, env: Mapping[str, str]) -> Line:
    content = _content(text)
    if not content:
        kind = "comment" if text.strip() else "blank"
        return Line(source, number, text, kind, section)
    if content.startswith("[") and content.endswith("]"):
        return Line(source, number, text, "section", content[1:-1].strip(), content[1:-1].strip())
    if content.startswith("include ") or content.startswith("include\t"):
        return Line(source, number, text, "include", section, "include", content[len("include"):].strip())
    key, sep, value = content.partition("=")
    key = ALIASES.get(key.strip().lower(), key.strip().lower())
    expanded = ENV_VARIABLE.sub(lambda m: env.get(m.group(1), m.group(0)), value.strip()) if sep else None
    return Line(source, number, text, "option", section, key, expanded)


def _read_lines(path: Path, section: str, env: Mapping[str, str], top: Path) -> list[Line]:
    lines: list[Line] = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        line = _classify(str(path), number, text, section, env)
        if line.kind == "section":
            section = line.key
        lines.append(line)
        if line.kind == "include":
            included = (path.parent / line.value).resolve()
            if not included.is_relative_to(top) or not included.is_file():
                why = "is outside the job file's folder" if not included.is_relative_to(top) else "does not exist"
                raise JobFileError([Refusal(str(path), number, "include", f"{line.value} {why}")])
            lines += _read_lines(included, section, env, top)
    return lines


def split_files(value: str) -> list[str]:
    """fio's list of files or directories: separated by ``:``, a ``\\:`` is a colon inside a name."""
    return [part.replace("\\:", ":") for part in re.split(r"(?<!\\):", value) if part]


def join_files(paths: Sequence[str]) -> str:
    return ":".join(str(p).replace(":", "\\:") for p in paths)


def _escapes(relative: str) -> bool:
    return PurePosixPath(relative).is_absolute() or ".." in PurePosixPath(relative).parts


@dataclass(frozen=True)
class JobFile:
    """A job file as read: its lines, includes resolved in place."""

    path: Path
    lines: tuple[Line, ...]

    @classmethod
    def read(cls, path: Path | str, env: Mapping[str, str] | None = None) -> "JobFile":
        """Read ``path`` with fio's rules; ``${VAR}`` is taken from ``env`` (default: this process's environment)."""
        path = Path(path).resolve()
        if not path.is_file():
            raise ConfigError(f"job file {str(path)!r} does not exist")
        lines = _read_lines(path, "", dict(os.environ if env is None else env), path.parent)
        jobfile = cls(path, tuple(lines))
        if not jobfile.sections():
            raise JobFileError([Refusal(str(path), 1, "[section]", "the file defines no job section")])
        return jobfile

    @property
    def sha256(self) -> str:
        """The hash of the text as written, included files in place: what the user asked fio to run."""
        return hashlib.sha256("\n".join(line.text for line in self.lines).encode()).hexdigest()

    def sections(self) -> list[str]:
        """The job sections, in order ([global] is not a job)."""
        return [line.key for line in self.lines if line.kind == "section" and line.key != "global"]

    def options(self, section: str) -> dict[str, Line]:
        """The lines in effect for ``section``: the [global] sections before it, then its own; the last wins."""
        effective: dict[str, Line] = {}
        for line in self.lines:
            if line.kind == "section" and line.key == section:
                break
            if line.kind == "option" and line.section == "global":
                effective[line.key] = line
        for line in self.lines:
            if line.kind == "option" and line.section == section:
                effective[line.key] = line
        return effective

    def groups(self) -> list[list[str]]:
        """The reporting groups, each a list of its sections: ``stonewall`` and ``new_group`` start one."""
        groups: list[list[str]] = []
        for section in self.sections():
            own = {line.key for line in self.lines if line.kind == "option" and line.section == section}
            starts = bool(own & {"stonewall", "new_group"}) and self._flag_on(section, own)
            if not groups or starts:
                groups.append([])
            groups[-1].append(section)
        return groups

    def _flag_on(self, section: str, own: set[str]) -> bool:
        values = [self.options(section)[key].value for key in ("stonewall", "new_group") if key in own]
        return any(value in (None, "", "1", "true") for value in values)

    def refusals(self, targets: Sequence[str]) -> list[Refusal]:
        """Every reason not to run this file on ``targets`` (the layout's directories or devices), in line order."""
        targets = _checked_targets(targets)
        found = [Refusal(line.source, line.number, f"[{line.key}]", "a job name with '/' makes fio's file names "
                         "leave the target directory") for line in self.lines if line.kind == "section"
                 and "/" in line.key]
        return found + [refusal for line in self.lines if line.kind == "option"
                        for refusal in [_refusal(line, targets)] if refusal]

    def check(self, targets: Sequence[str]) -> None:
        """Raise ``JobFileError`` naming every refused option and its line; return quietly otherwise."""
        found = self.refusals(targets)
        if found:
            raise JobFileError(found)

    def rewrite(self, targets: Sequence[str], raw_dir: Path | str,
                overrides: Mapping[str, object] | None = None) -> str:
        """The job file as flashscale runs it on ``targets``, logs in ``raw_dir``; a refused file raises."""
        self.check(targets)
        targets = _checked_targets(targets)
        forced = {"group_reporting": "1", **{ALIASES.get(k, k): str(v) for k, v in (overrides or {}).items()}}
        spread = self.spread(targets, forced)
        out: list[str] = []
        for line in self.lines:
            out.append(_rewritten(line, spread.get(line.section, targets), Path(raw_dir).absolute(), forced))
            if line.kind == "section" and line.key != "global":
                out += self._inserted(line.key, spread[line.key], Path(raw_dir).absolute(), forced)
        return "\n".join(out) + "\n"

    def spread(self, targets: Sequence[str], forced: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
        """Each job section's targets, in the order fio hands them to its clones (clone k takes the k-th): within a
        group, a section starts where the jobs of the sections before it stopped, so a group's jobs are spread
        over the targets as evenly as flashscale spreads its own."""
        targets, forced = tuple(targets), forced or {}
        spread = {}
        for group in self.groups():
            start = 0
            for section in group:
                spread[section] = targets[start % len(targets):] + targets[:start % len(targets)]
                numjobs = forced.get("numjobs") or getattr(self.options(section).get("numjobs"), "value", None)
                start += int(numjobs) if (numjobs or "").isdigit() else 1
        return spread

    def _inserted(self, section: str, targets: tuple[str, ...], raw_dir: Path, forced: Mapping[str, str]) -> list[str]:
        """The lines flashscale adds after a job section's header: its targets unless it names its own (replaced
        where it does), and what else it needs and does not set."""
        scope = self.options(section)
        key = "filename" if is_device(targets[0]) else "directory"
        own = any(_is_target_line(scope[k]) and scope[k].section == section for k in TARGET_OPTIONS if k in scope)
        lines = [] if own else [f"{key}={join_files(targets)}{MARK}"]
        named = "filename_format" in scope or ("filename" in scope and not _is_target_line(scope["filename"]))
        if not named and not is_device(targets[0]):
            lines.append(f"filename_format={OWN_FILE_PREFIX}$jobname.$jobnum.$filenum{MARK}")
        lines += [f"{k}={v}{MARK}" for k, v in forced.items() if k not in scope]
        inherited = [k for k in LOG_OPTIONS if k in scope and scope[k].section == "global"]
        lines += [f"{k}={_log_name(scope[k], raw_dir, suffix=section)}{MARK}" for k in inherited]
        return lines


MARK = " ; flashscale"  # ends every line flashscale wrote (fio reads it as a comment)


def _checked_targets(targets: Sequence[str]) -> tuple[str, ...]:
    """The layout's targets: absolute paths, all directories or all local devices (``fio.is_device``). An
    ``nbd://`` export is a device to fio.is_device but no path: a user's job file is not run over NBD (nor can the
    file name one itself: ``ioengine=nbd`` is not in ``ENGINES``, and ``filename=nbd://...`` is not a file inside
    the targets)."""
    targets = tuple(str(t) for t in targets)
    if not targets or isinstance(targets, str):
        raise ConfigError("a job file needs at least one target (the layout's directories or devices)")
    if len({is_device(t) for t in targets}) != 1 or not all(t.startswith("/") for t in targets):
        raise ConfigError(f"targets {list(targets)}: give absolute paths, all directories or all devices")
    if any(ch in t for t in targets for ch in ";#"):
        raise ConfigError(f"targets {list(targets)}: fio reads ';' and '#' as the start of a comment")
    return targets


def _is_target_line(line: Line) -> bool:
    """A directory= or filename= naming an absolute path: the device or mount point the file was written for."""
    return line.key in TARGET_OPTIONS and any(p.startswith("/") for p in split_files(line.value or ""))


def _inside(path: str, targets: Sequence[str]) -> bool:
    return any(Path(os.path.normpath(path)).is_relative_to(t) for t in targets if not is_device(t))


def _refusal(line: Line, targets: tuple[str, ...]) -> Refusal | None:
    reason = _reason(line, targets)
    return Refusal(line.source, line.number, line.key, reason) if reason else None


def _reason(line: Line, targets: tuple[str, ...]) -> str | None:
    key, value = line.key, line.value or ""
    on_devices = is_device(targets[0])
    if key not in TARGET_OPTIONS + LOG_OPTIONS + ("description", "name"):
        for device in re.findall(r"(?:^|[\s:,=])(/dev/[^\s:,]+)", value):
            if device not in targets:
                return f"{device}: a raw device path the guard has not approved (the layout's: {list(targets)})"
    if key in REFUSED_OPTIONS:
        return REFUSED_OPTIONS[key]
    if re.match(r"[^=]*=[ \t]", _content(line.text)):
        return "a blank after '=' is part of the value for fio (bs= 8k reads as 8 bytes, ioengine= libaio fails)"
    if key == "ioengine":
        return _engine_reason(value)
    if key == "mem" and ":" in value:
        return f"{value}: backs the I/O buffers with a file outside the layout"
    unset = ENV_VARIABLE.search(value)
    if unset and (key in TARGET_OPTIONS + PATH_OPTIONS):
        return f"{value}: the environment variable {unset.group(1)} is not set"
    if key == "directory" and not _is_target_line(line):
        return f"{value or '(empty)'}: a relative directory is fio's working directory, outside the layout"
    if key == "filename" and not _is_target_line(line):
        return _relative_file_reason(value, on_devices)
    if key == "rw" and "trim" in value and not on_devices:
        return f"{value}: fio trims devices, not files in a directory"
    if key == "opendir" and not _inside(value, targets):
        return f"{value}: opens every file below a directory outside the layout's targets {list(targets)}"
    if key == "filename_format" and _escapes(value):
        return f"{value}: names files outside the target directory"
    return None


def _engine_reason(value: str) -> str | None:
    engine = value.strip()
    if engine.startswith("external") or "/" in engine:
        return f"{engine}: loads and executes code from outside fio"
    if engine == "exec":
        return "exec: runs programs"
    if engine not in ENGINES:
        return f"{engine}: not a built-in engine flashscale runs ({', '.join(ENGINES)})"
    return None


def _relative_file_reason(value: str, on_devices: bool) -> str | None:
    files = split_files(value)
    if on_devices:
        return f"{value}: a file in fio's working directory; on devices flashscale names the devices itself"
    if not files or "-" in files:
        return f"{value or '(empty)'}: not a file inside the layout's target directories"
    escaping = [f for f in files if _escapes(f)]
    return f"{escaping[0]}: leaves the target directory" if escaping else None


def _log_name(line: Line, raw_dir: Path, suffix: str = "") -> str:
    """A log option's file prefix, moved into the run's raw directory (``suffix`` keeps sections apart)."""
    base = PurePosixPath(line.value).name if line.value else (line.section or "fio")
    return str(raw_dir / (f"{base}.{suffix}" if suffix else base))


def _own_names(value: str) -> str:
    """A relative filename list or a filename_format, each name prefixed so the layout's teardown removes it."""
    return join_files([f if f.startswith(OWN_FILE_PREFIX) else OWN_FILE_PREFIX + f for f in split_files(value)])


def _rewritten(line: Line, targets: tuple[str, ...], raw_dir: Path, forced: Mapping[str, str]) -> str:
    """The line as flashscale writes it: the user's text unless it is a target, a log name or a forced value."""
    if line.kind == "include":
        return f";{line.text}{MARK}: its lines follow"
    if line.kind != "option":
        return line.text
    if _is_target_line(line) or (line.key == "directory" and is_device(targets[0])):
        key = "filename" if is_device(targets[0]) else "directory"
        return f"{key}={join_files(targets)}{MARK}"
    if line.key in LOG_OPTIONS:
        return f"{line.key}={_log_name(line, raw_dir)}{MARK}"
    if line.key in ("filename", "filename_format") and not is_device(targets[0]):
        return f"{line.key}={_own_names(line.value or '')}{MARK}"
    if line.key in forced and not (line.value == forced[line.key] or (line.value is None and forced[line.key] == "1")):
        return f"{line.key}={forced[line.key]}{MARK}"
    if ENV_VARIABLE.search(line.text) and line.value is not None:  # fio runs what was checked, whatever its env
        return f"{line.key}={line.value}{MARK}"
    return line.text
