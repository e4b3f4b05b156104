"""How an import's folder is written: whole, beside the old one, then put in its place at once.

An import builds the folder it will leave in a new folder beside ``--to`` (``.<name>.import-<random>``, made by
``tempfile.mkdtemp``): every file the earlier folder holds is hard-linked into it (copied where the file system
cannot link), except the table and the files an import rewrites, which are written there new; then the new raw
copies. Only when all of it is written are the two folders exchanged, by one ``renameat2(RENAME_EXCHANGE)``
(Linux 3.15 on; for a new ``--to``, one ``rename``): a reader sees the old folder or the new, never half of one,
and an import that fails or is killed before the exchange leaves ``--to`` as it was. The old folder, now at the
staging name, is removed after. A file system that cannot exchange (``EINVAL``) gets two renames, the old folder
moved aside first: killed between the two, ``--to`` is missing and the old folder is at ``.<name>.import-old-...``
beside it, whole.

Every path written is the import's own (``write``): one that would resolve outside the staging folder is refused,
and nothing is written through a link. One import into a folder at a time (``locked``: a second is refused while
the first runs). A staging folder that a killed import left (its marker names a process no longer running) is
removed by the next import into the same ``--to``.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import glob
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from ...errors import RefusedError

MARKER = ".flashscale-import-staging"  # inside a staging folder: the pid of the import writing it
RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


@contextlib.contextmanager
def locked(to: Path) -> Iterator[None]:
    """One import into ``to`` at a time: the folder itself (its parent, while it does not exist yet) held with
    ``flock`` while the import runs, let go by the kernel when it ends or dies; nothing is written to lock it.
    RefusedError naming the folder while another import holds it."""
    to.parent.mkdir(parents=True, exist_ok=True)
    held = os.open(to if to.is_dir() else to.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RefusedError(f"another flashscale import into {str(to)!r} is running: nothing was written") from None
        yield
    finally:
        os.close(held)


def staging(to: Path) -> Path:
    """A new folder beside ``to`` to build the import in (its parents made as an import makes ``to``'s), marked with
    this process's pid; staging folders of killed imports beside it removed first."""
    to.parent.mkdir(parents=True, exist_ok=True)
    for left in to.parent.glob(f".{glob.escape(to.name)}.import-*"):
        if _abandoned(left):
            shutil.rmtree(left, ignore_errors=True)
    made = Path(tempfile.mkdtemp(prefix=f".{to.name}.import-", dir=to.parent))
    (made / MARKER).write_text(str(os.getpid()))
    return made


def _abandoned(folder: Path) -> bool:
    """Whether ``folder`` is a staging folder whose import is no longer running."""
    try:
        pid = int((folder / MARKER).read_text())
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError):
        return False
    return False


def linked(old: Path, new: Path, rewritten: Iterable[str]) -> None:
    """Every file under ``old`` into ``new`` at the same place, hard-linked (copied where it cannot be), but the
    ``rewritten`` files at its top; symbolic links are not an import's and are not carried over."""
    skip = set(rewritten)
    for top, folders, files in os.walk(old, followlinks=False):
        here = Path(top)
        there = new / here.relative_to(old)
        there.mkdir(exist_ok=True)
        folders[:] = [f for f in folders if not (here / f).is_symlink()]
        for name in files:
            source = here / name
            if source.is_symlink() or (here == old and name in skip) or not source.is_file():
                continue
            try:
                os.link(source, there / name)
            except OSError:
                shutil.copy2(source, there / name)


def write(folder: Path, name: str, content: bytes) -> None:
    """``content`` as ``folder/name``, a new file (written beside, then renamed: never through a link or over the
    inode of a file the old folder shares); RefusedError when ``name`` would resolve outside ``folder``."""
    target = folder / name
    base = folder.resolve()
    if not target.resolve().is_relative_to(base) or target.resolve() == base:
        raise RefusedError(f"{name!r:.80} resolves outside the import's folder: not written")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(base):
        raise RefusedError(f"{name!r:.80} resolves outside the import's folder: not written")
    partial = target.with_name(f".{target.name}.partial")
    partial.write_bytes(content)
    partial.replace(target)


def exchange(new: Path, to: Path) -> None:
    """Put the folder ``new`` in place of ``to`` at once (``renameat2(RENAME_EXCHANGE)``, or ``rename`` for a new
    ``to``), then remove what was ``to``; two renames where the file system cannot exchange (module docstring)."""
    (new / MARKER).unlink()
    if not to.exists() or (to.is_dir() and not any(to.iterdir())):
        os.replace(new, to)
        return
    if not _exchanged(new, to):
        aside = Path(tempfile.mkdtemp(prefix=f".{to.name}.import-old-", dir=to.parent))
        os.replace(to, aside / "old")
        os.replace(new, to)
        new = aside
    shutil.rmtree(new)


def _exchanged(a: Path, b: Path) -> bool:
    """Whether ``renameat2`` exchanged ``a`` and ``b``; False where libc or the file system has no such call."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = call(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if done == 0:
        return True
    error = ctypes.get_errno()
    if error in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system cannot
        return False
    raise OSError(error, f"renameat2({a}, {b}, RENAME_EXCHANGE): {os.strerror(error)}")
