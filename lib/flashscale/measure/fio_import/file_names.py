"""What a file's name says of the run it holds, and what the user says of it: layout, host, and where the file is
silent (fio before 2.3, terse output, a target that is no list of devices) rw, bs, iodepth, numjobs and devices.

Three ways, each filling only what the ones before it left open:

    --pattern '{layout}/{bs}/{rw}-{iodepth}-{numjobs}.json'   the end of each file's path, read by fields
    --map map.yaml                                           entries matching paths (glob), outputs (their number in
                                                             their file) and job names (glob) to layout, devices,
                                                             host...; each field from the first that gives it
    --layout NAME --devices N --host NAME                    for every file

Fields: layout, devices, host, rw, bs (``4k``, ``1M``, bytes), iodepth, numjobs, rep (only orders repetitions),
and ``{*}`` for a part that says nothing. fio-plot's bench-fio writes ``<output>/<device>/<bs>/<rw>-<iodepth>-
<numjobs>.json`` (a mixed rw under ``<device>/<rw><rwmixread>/<bs>/``, each of ``--loops`` runs under
``run-<n>/``): ``'{layout}/{bs}/{rw}-{iodepth}-{numjobs}.json'``, ``'{layout}/{*}/{bs}/{rw}-{iodepth}-{numjobs}.json'``
and ``'{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json'``.

Where the file says rw, bs, iodepth, numjobs or devices itself, the file wins and each difference from its name is
kept as a sentence naming the file (``reconcile``); where the file only infers one (a device count from a list of
plain files, ``targets``), the name's is kept.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from . import derived
from ...errors import ConfigError

FIELDS = ("layout", "devices", "host", "rw", "bs", "iodepth", "numjobs", "rep")
FROM_FILE = ("rw", "bs", "iodepth", "numjobs", "devices")  # what a file may say itself
COUNTS = ("devices", "iodepth", "numjobs", "rep")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class PathMatch:
    """The fields a ``PathPattern`` read from a path (``groupdict`` as a regular expression's match gives them)."""

    fields: dict

    def groupdict(self) -> dict:
        return dict(self.fields)


@dataclass(frozen=True)
class PathPattern:
    """A --pattern read: its parts in order, each a literal, a field (``{layout}``: one part of a name, no /) or
    ``{*}`` (the same, unnamed, maybe empty). ``search`` reads the end of a path in one pass, in time linear in its
    length whatever the name (a file's name is someone else's input): the pattern's last parts are the path's, each
    field ends at the first of the words that follow it (the pattern's last words end the name), as a lazy
    regular expression would read the names fio-plot and people write, without its backtracking."""

    text: str
    parts: tuple[tuple[str, str], ...]

    def search(self, path: str) -> PathMatch | None:
        segments = path.split("/")
        want = self.text.count("/") + 1
        if len(segments) < want:
            return None
        tail, at, found = "/".join(segments[-want:]), 0, {}
        for index, (kind, value) in enumerate(self.parts):
            if kind == "literal":
                if not tail.startswith(value, at):
                    return None
                at += len(value)
                continue
            end = self._end(tail, at, index, 1 if kind == "field" else 0)
            if end is None or "/" in tail[at:end]:
                return None
            if kind == "field":
                found[value] = tail[at:end]
            at = end
        return PathMatch(found) if at == len(tail) else None

    def _end(self, tail: str, at: int, index: int, least: int) -> int | None:
        """Where the field at ``parts[index]`` that begins at ``at`` ends: before the words that follow it."""
        after = self.parts[index + 1] if index + 1 < len(self.parts) else None
        if after is None:
            return len(tail) if len(tail) - at >= least else None
        if after[0] != "literal":
            return at + least
        if index + 2 == len(self.parts):  # the pattern's last words end the name
            end = len(tail) - len(after[1])
            return end if end - at >= least and tail.endswith(after[1]) else None
        end = tail.find(after[1], at + least)
        return end if end >= 0 else None


def compile_pattern(pattern: str) -> PathPattern:
    """``pattern`` read (``PathPattern``): each ``{field}`` one part of a name (no /), ``{*}`` the same, unnamed.
    ConfigError naming an unknown or repeated field."""
    parts, seen, at = [], set(), 0
    for found in PLACEHOLDER.finditer(pattern):
        if found.start() > at:
            parts.append(("literal", pattern[at:found.start()]))
        name = found[1]
        if name == "*":
            parts.append(("any", "*"))
        elif name not in FIELDS or name in seen:
            raise ConfigError(f"--pattern {pattern!r}: {{{name}}} is {'repeated' if name in seen else 'not a field'}"
                              f"; fields: {', '.join(FIELDS)}, and {{*}} for a part that says nothing")
        else:
            seen.add(name)
            parts.append(("field", name))
        at = found.end()
    if at < len(pattern):
        parts.append(("literal", pattern[at:]))
    return PathPattern(pattern, tuple(parts))


def value_of(name: str, text: object, where: str) -> object:
    """A field's value as the table keeps it: counts whole numbers above 0 (rep from 0), bs in bytes, names as
    text. ConfigError naming ``where``, the field and the value."""
    if name == "bs":
        from ..units import read_size  # here, not above: import --help reads FIELDS without the units' pandas

        return read_size(text if isinstance(text, int) else str(text), f"{where}: bs")
    if name in COUNTS:
        ok = isinstance(text, int) or (isinstance(text, str) and text.strip().isdigit())
        least = 0 if name == "rep" else 1
        if isinstance(text, bool) or not ok or int(text) < least:
            raise ConfigError(f"{where}: {name}={text!r} is not a whole number of at least {least}")
        return int(text)
    if not isinstance(text, str) or not text.strip() or "/" in text:
        raise ConfigError(f"{where}: {name}={text!r} must be a plain name")
    return text.strip()


@dataclass(frozen=True)
class Rule:
    """One entry of a --map file: what it matches (a glob of paths, an output's number in its file, a glob of job
    names; each that is given must match) and what it says of the rows it matches."""

    match: str | None
    names: dict
    output: int | None = None
    job: str | None = None

    def matches(self, path: Path, output: int, jobs: Sequence[str]) -> bool:
        """Whether this entry matches the rows of output ``output`` of ``path`` whose job names are ``jobs``."""
        return (self.match is None or any(fnmatch.fnmatchcase(p, self.match) for p in
                                          (Path(path).as_posix(), Path(path).resolve().as_posix()))) and \
            (self.output is None or self.output == output) and \
            (self.job is None or any(fnmatch.fnmatchcase(job, self.job) for job in jobs))


SELECTORS = ("match", "output", "job")


def read_map(path: Path) -> list[Rule]:
    """A --map file: a list of entries, each matching by ``match`` (a glob of paths), ``output`` (an output's
    number in its file, from 0) and ``job`` (a glob of job names), one at least, and giving fields (``FIELDS``);
    or a mapping GLOB -> {...}. ConfigError naming the file and the entry it cannot read."""
    import yaml  # here, not above: import --help reads FIELDS without it

    try:
        loaded = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"--map {str(path)!r} cannot be read: {exc}") from None
    if isinstance(loaded, Mapping):
        loaded = [{"match": glob, **(names or {})} if isinstance(names, Mapping) else {"match": glob, "bad": names}
                  for glob, names in loaded.items()]
    if not isinstance(loaded, list) or not loaded:
        raise ConfigError(f"--map {str(path)!r}: expected a list of entries such as {{match: 'results/md0/*', "
                          "layout: md-raid0, devices: 4}")
    return [_rule(entry, f"--map {str(path)!r} entry {number}") for number, entry in enumerate(loaded, start=1)]


def _rule(entry: object, where: str) -> Rule:
    if not isinstance(entry, Mapping) or not any(k in entry for k in SELECTORS):
        raise ConfigError(f"{where}: needs 'match' (a glob of paths), 'output' (an output's number in its file, "
                          f"from 0) or 'job' (a glob of job names) (got {entry!r:.80})")
    unknown = sorted(set(entry) - {*SELECTORS, *FIELDS})
    if unknown:
        raise ConfigError(f"{where}: {', '.join(map(repr, unknown))} not known; it may give {', '.join(FIELDS)}")
    for key in ("match", "job"):
        if key in entry and not isinstance(entry[key], str):
            raise ConfigError(f"{where}: {key}={entry[key]!r:.80} must be a glob (text)")
    output = entry.get("output")
    if "output" in entry and (isinstance(output, bool) or not isinstance(output, int) or output < 0):
        raise ConfigError(f"{where}: output={output!r:.80} must be a whole number from 0 (the first output)")
    return Rule(entry.get("match"), {k: value_of(k, v, where) for k, v in entry.items() if k not in SELECTORS},
                output, entry.get("job"))


@dataclass(frozen=True)
class Naming:
    """How the files of an import are named: a pattern, a map, and the values given for every file."""

    pattern: str | None = None
    rules: tuple[Rule, ...] = ()
    given: dict = field(default_factory=dict)  # --layout, --devices, --host

    def __post_init__(self) -> None:
        if self.pattern is not None:
            compile_pattern(self.pattern)
        for name, value in self.given.items():
            value_of(name, value, f"--{name}")

    def names_for(self, path: Path, output: int = 0, jobs: Sequence[str] = ()) -> dict:
        """What the pattern, the map and the values given say of the rows of output ``output`` of ``path``
        whose job names are ``jobs``: each field from the pattern, else the first matching map entry that gives
        it, else the values given. ConfigError naming the file when the pattern does not fit it or one of its
        values cannot be read."""
        names: dict = {}
        if self.pattern is not None:
            found = compile_pattern(self.pattern).search(Path(path).as_posix())
            if found is None:
                raise ConfigError(f"its path does not fit --pattern {self.pattern!r}")
            where = f"its path, by --pattern {self.pattern!r}"
            names = {k: value_of(k, v, where) for k, v in found.groupdict().items()}
        mapped: dict = {}
        for rule in self.rules:
            if rule.matches(path, output, jobs):
                mapped = {**rule.names, **mapped}  # an earlier entry's field stays
        names = {**mapped, **names}
        return {**{k: value_of(k, v, f"--{k}") for k, v in self.given.items()}, **names}


def reconcile(from_file: Mapping, names: Mapping, weak: frozenset = frozenset()) -> tuple[dict, list[str]]:
    """The run's axes: the file's where it says them, the name's where it does not; and a sentence for each field
    where the two differ (the file's kept). A field in ``weak`` the file only infers (a group_reporting group's
    numjobs read from its last job's option; a bs or iodepth derived from its numbers): there the name's is kept.
    Where the file gives only a ``direction`` (``derived``), the rw is the name's random or sequential in the
    file's direction, or the name's whole rw (said where its direction is not the file's)."""
    axes, said = {}, []
    for name in FROM_FILE:
        mine, theirs = from_file.get(name), names.get(name)
        if name == "rw" and mine is None and from_file.get("direction"):
            axes[name], words = _rw_in(from_file["direction"], theirs)
            said += [words] if words else []
            continue
        if name == "rw" and theirs in derived.ORDERS and mine is not None:
            theirs = mine if derived.order_of(mine) in (theirs, None) else theirs
        axes[name] = theirs if name in weak and theirs is not None else mine if mine is not None else theirs
        if mine is not None and theirs is not None and mine != theirs:
            said.append(f"the name says {name}={theirs}, the file {name}={mine}: " + (
                "the file's is only inferred, the name's is kept" if name in weak else "the file's is kept"))
    return axes, said


def _rw_in(way: str, given: object) -> tuple[str | None, str | None]:
    """The rw of a file that says only its direction ``way``, given the name's rw (random, sequential or a whole
    rw; None: unknown), and a sentence where the name's direction is not the file's."""
    order = derived.order_of(str(given)) if given is not None else None
    if order is None:
        return (str(given), None) if given is not None else (None, None)
    if given in derived.ORDERS:
        return derived.rw_of(order, way), None
    if derived.DIRECTION_OF.get(str(given)) != way:  # derived, so the user's word is kept
        return str(given), (f"the name says rw={given}, the file's numbers moved data {way} only: the name's is "
                            "kept (a unified_rw_reporting run puts all its I/O on one side)")
    return str(given), None


def missing(axes: Mapping, names: Mapping) -> list[str]:
    """What a row needs that neither the file nor its names give (an rw of ``random`` or ``sequential`` alone,
    with no direction from the file, is not a whole rw)."""
    need = [n for n in FROM_FILE if axes.get(n) is None or (n == "rw" and axes[n] in derived.ORDERS)]
    return need + (["layout"] if names.get("layout") is None else [])
