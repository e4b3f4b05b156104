"""Which files an import reads: those named on the command line, those a glob matches, and every file under a
folder; their content then says whether each is fio's output (``contents``). A folder's symbolic links are not
followed.

Every file is read whatever its name (fio's ``--output`` takes any), and one whose content is not fio's output is
left aside, counted by what it is (``contents``), not refused: a shell's ``results/*`` names a folder's job files and
notes as surely as the folder does. A file named on the command line is read, and so is the file a symbolic link
named there points to: the user chose it. A symbolic link met inside a folder, or matched by a glob, is not followed
(to a file or to a folder): it may point anywhere on the machine, and whoever made the folder chose it, not the
user. Each such link is counted and said, never read; name it on the command line to read what it points to.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from typing import Iterable

from ...errors import ConfigError

LINKS = "symbolic links (not followed: name one on the command line to read it)"


@dataclass
class Found:
    """The files an import reads, sorted, each once, and the links left aside, counted."""

    files: list[Path] = field(default_factory=list)
    aside: Counter = field(default_factory=Counter)


def _walk(folder: Path, skip: Path | None, aside: Counter) -> list[Path]:
    """Every file under ``folder``, its symbolic links (to files or folders) counted aside, never followed, and
    nothing under ``skip``."""
    found = []
    for top, folders, files in os.walk(folder, followlinks=False):
        here = Path(top)
        if skip is not None and here.resolve().is_relative_to(skip):
            folders[:] = []
            continue
        aside.update([LINKS] * sum(1 for name in folders if (here / name).is_symlink()))
        for name in sorted(files):
            inside = here / name
            if inside.is_symlink():
                aside[LINKS] += 1
            elif inside.is_file():
                found.append(inside)
    return found


def _through_link(path: Path, pattern: str) -> bool:
    """Whether ``path``, a match of the glob ``pattern``, is a symbolic link or lies under one that the glob's
    wildcards crossed (the folders the glob names literally are the user's own)."""
    parts = Path(pattern).parts
    literal = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
    return any(Path(*path.parts[:i + 1]).is_symlink() for i in range(literal, len(path.parts)))


def find_files(paths: Iterable[str], skip: Path | None = None) -> Found:
    """The files to read: each file named (a symbolic link named is followed), each match of a glob and each file
    under a folder (recursively; symbolic links among them not followed); sorted, each once, none under ``skip``
    (the import's own folder). ConfigError naming a path that is none of these."""
    found, aside = [], Counter()
    skip = skip.resolve() if skip is not None else None
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(_walk(path, skip, aside))
        elif any(c in str(given) for c in "*?["):
            matched = [Path(p) for p in glob(str(given), recursive=True)]
            linked = [p for p in matched if _through_link(p, str(given))]
            aside.update([LINKS] * len(linked))
            files = sorted(p for p in matched if p.is_file() and p not in linked)
            if not files:
                raise ConfigError(f"{given!r} matches no file" + (" (only symbolic links, not followed)"
                                                                    if matched else ""))
            found.extend(files)
        else:
            raise ConfigError(f"{given!r} is neither a file, a folder nor a glob that matches one")
    unique = {p.resolve(): p for p in found if skip is None or not p.resolve().is_relative_to(skip)}
    return Found(sorted(unique.values(), key=lambda p: p.as_posix()), aside)
