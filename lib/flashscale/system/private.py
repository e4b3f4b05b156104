"""Places only their owner can reach, here or on a host: the runtime folder (manifests, fio's sockets, shipped code),
checked on every use; flashscale's zip put there in a fresh folder, and run only once its SHA-256 is the driver's.

    runtime_dir()       /run/flashscale for root; else $XDG_RUNTIME_DIR/flashscale; else flashscale-<uid> in the
                        temporary directory: made 0700 when missing, and refused, named, unless it is a folder of
                        this user's alone (``owned``), whoever made it
    owned(path)         the path when it is this user's folder of mode 0700 (or file of mode 0600), not a symlink
    install NAME SHA    (the program) the zip on stdin, checked against SHA, into <runtime_dir>/ship/NAME: a folder
                        made fresh (refused when it exists), mode 0700, the zip 0600
    boot FOLDER SHA OP REQUEST   (the program) FOLDER's zip checked against SHA, then run with OP REQUEST; a
                        mismatch is refused by name and nothing runs

Python's standard library only, nothing else of flashscale's: ``program()`` is this module's own source, which ssh
gives a host's ``python3 -I -S -c`` before flashscale is there (install) and before every run of it (boot).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import runpy
import stat
import sys
import tempfile
from pathlib import Path

try:
    from ..errors import RefusedError
except ImportError:  # run alone, as the program ssh gives a host: flashscale is not there yet

    class RefusedError(Exception):
        """The host's side of flashscale's RefusedError: the driver raises it by that name."""

ROOT_DIR = Path("/run/flashscale")
SHIP = "ship"  # the shipped folders' folder in the runtime folder
PACKAGE = "flashscale.pyz"
SHIP_NAME = re.compile(r"flashscale-ship-[0-9a-f]{8}-[0-9a-f]{12}(?:-r[0-9a-f]{8})?")
SHA256 = re.compile(r"[0-9a-f]{64}")
PACKAGE_MAX = 64 * 2**20
EXISTS = "exists already: it is not the fresh folder flashscale makes"  # install's refusal of a folder not its own


def runtime_dir() -> Path:
    """Where this user's manifests, sockets and shipped code live; RefusedError when it is not theirs alone."""
    if os.geteuid() == 0 and Path("/run").is_dir():
        return folder(ROOT_DIR)
    given = os.environ.get("XDG_RUNTIME_DIR")
    if given and Path(given).is_absolute():
        return folder(owned(Path(given)) / "flashscale")
    return folder(Path(tempfile.gettempdir()) / f"flashscale-{os.geteuid()}")


def folder(path: Path) -> Path:
    """``path``, made (mode 0700) when missing, then checked as ``owned``: found or made, it is used only if ours."""
    try:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # whatever the umask
    except FileExistsError:
        pass
    return owned(path)


def owned(path: Path, mode: int = 0o700) -> Path:
    """``path`` when it is a folder (``mode`` 0700) or a regular file (0600) of this user's, of exactly ``mode``, and
    not a symlink; RefusedError naming what it is otherwise."""
    path = Path(path)
    want = "folder" if mode == 0o700 else "file"
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise RefusedError(f"{path}: {exc.strerror}") from None
    kind = stat.S_ISDIR(info.st_mode) if want == "folder" else stat.S_ISREG(info.st_mode)
    if kind and info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == mode:
        return path
    what = "a symlink" if stat.S_ISLNK(info.st_mode) else f"owned by uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}"
    raise RefusedError(f"{path} is {what}, not a {want} of uid {os.geteuid()} with mode {mode:o}: someone else can "
                       f"make or change it, so flashscale neither reads nor writes it (remove it if you know whose "
                       "it is)")


def install(name: str, sha256: str) -> dict:
    """The zip arriving on stdin, checked against ``sha256``, into a fresh folder ``name`` of the runtime folder's
    ship folder; RefusedError when the folder exists or the zip arrived changed."""
    if not SHIP_NAME.fullmatch(name) or not SHA256.fullmatch(sha256):
        raise RefusedError(f"{name!r} is not a shipped folder's name of flashscale's, or {sha256!r} not a SHA-256")
    target = folder(runtime_dir() / SHIP) / name
    try:
        os.mkdir(target, 0o700)
    except FileExistsError:
        raise RefusedError(f"{target} {EXISTS}; nothing was shipped into it or run from it") from None
    os.chmod(target, 0o700)
    data = sys.stdin.buffer.read(PACKAGE_MAX + 1)
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        os.rmdir(target)
        raise RefusedError(f"the zip shipped to {target} arrived with SHA-256 {digest}, not {sha256}: not kept")
    handle = os.open(target / PACKAGE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    return {"folder": str(target)}


def checked_zip(where: str, sha256: str) -> Path:
    """The zip in the shipped folder ``where`` when it is in this host's ship folder, every folder and the zip
    ours alone (``owned``) and its SHA-256 ``sha256``; RefusedError naming it otherwise."""
    target = Path(where)
    base = runtime_dir() / SHIP
    if not SHIP_NAME.fullmatch(target.name) or target.parent != base:
        raise RefusedError(f"{where!r} is not a folder flashscale ships to ({base}/flashscale-ship-*): nothing run")
    zipped = owned(owned(owned(base) / target.name) / PACKAGE, 0o600)
    handle = os.open(zipped, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(handle, "rb") as fh:
        digest = hashlib.sha256(fh.read(PACKAGE_MAX + 1)).hexdigest()
    if digest != sha256:
        raise RefusedError(f"{zipped} has SHA-256 {digest}, not {sha256}, the one of the zip the driver shipped: it "
                           "was changed since; nothing was run from it")
    return zipped


def boot(where: str, sha256: str, *args: str) -> None:
    """Run the zip in the shipped folder ``where`` with ``args``, once ``checked_zip`` passes."""
    zipped = checked_zip(where, sha256)
    sys.argv = [str(zipped), *args]
    runpy.run_path(str(zipped), run_name="__main__")


def main(argv: list[str]) -> int:
    """``install NAME SHA`` or ``boot FOLDER SHA OP REQUEST``; a refusal is one JSON line, as the zip's answers are."""
    try:
        if argv[:1] == ["install"] and len(argv) == 3:
            print(json.dumps({"ok": True, **install(argv[1], argv[2])}))
        elif argv[:1] == ["boot"] and len(argv) >= 3:
            boot(*argv[1:])
        else:
            raise RefusedError(f"usage: install NAME SHA256 | boot FOLDER SHA256 OP REQUEST, not {argv[:1]}")
    except RefusedError as exc:
        print(json.dumps({"ok": False, "kind": "RefusedError", "error": str(exc)}))
    return 0


def _strip(node: ast.AST) -> None:
    """Remove the docstrings of ``node`` and of everything in it (``pass`` where a body would be left empty)."""
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            child.body = body[1:] or [ast.Pass()]


@functools.lru_cache(maxsize=1)
def program() -> str:
    """This module's source, docstrings and comments left out, that runs ``main``: what ``python3 -I -S -c`` runs on
    a host (read through the module's loader: from this checkout, or from the zip on a host)."""
    tree = ast.parse(__loader__.get_source(__name__))  # noqa: F821 (every module has its loader)
    _strip(tree)
    return ast.unparse(tree) + "\nsys.exit(main(sys.argv[1:]))\n"
