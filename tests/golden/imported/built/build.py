"""Build fio from its release tags, for the corpus of real output that ``run.py`` makes (README.md beside this file).

    python build.py GIT_DIR OUT_DIR fio-2.0.9 fio-2.0.10 ... fio-3.42

GIT_DIR is a clone of github.com/axboe/fio (a bare one will do); OUT_DIR receives ``<tag>/fio`` for each tag that
builds, and ``build.log``. Each tag's sources come from ``git archive`` into a fresh temporary directory; nothing is
committed of fio's code. What today's toolchain (Debian 12, gcc 12) needs of code from 2012 on is applied here, to the
extracted copy, and only where the source needs it:

- glibc 2.30 on declares ``gettid``: fio's own (os/os-linux.h, to fio 2.2) is renamed ``fio_gettid``;
- ``linux/raw.h`` left the kernel's headers: a stub with what fio used of it (``RAW_SETBIND``, ``RAW_GETBIND``,
  ``struct raw_config_request``) goes on the include path;
- gcc 10 on makes ``-fno-common`` the default, and fio to 3.x defined globals in headers: ``-fcommon``;
- ``major``/``minor`` moved to ``sys/sysmacros.h``, some files used ``uint64_t`` without ``stdint.h``: both
  ``-include``d; warnings off (``-w``: fio's old code has many under gcc 12, none of them ours to fix).

fio before 2.1 has no ``configure``: ``make EXTFLAGS=...``; the others ``./configure --extra-cflags=...``. ``make -j2``
(this machine has two cores, shared). A tag that does not build is said in build.log and skipped.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = "-O2 -fcommon -w -include sys/sysmacros.h -include stdint.h"
RAW_H = """#ifndef STUB_LINUX_RAW_H
#define STUB_LINUX_RAW_H
#include <linux/types.h>
#include <linux/ioctl.h>
#define RAW_SETBIND _IO(0xac, 0)
#define RAW_GETBIND _IO(0xac, 1)
struct raw_config_request { int raw_minor; __u64 block_major; __u64 block_minor; };
#endif
"""


def run(argv: list[str], cwd: Path, log) -> bool:
    log.write(f"$ (cd {cwd} && {' '.join(argv)})\n")
    log.flush()
    done = subprocess.run(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    log.write(f"  exit status {done.returncode}\n")
    return done.returncode == 0


def fixed(src: Path, include: Path) -> list[str]:
    """The fixes ``src`` needs (module docstring), applied; what was done."""
    done = []
    linux = src / "os" / "os-linux.h"
    own = linux.read_text() if linux.exists() else ""
    if "int gettid(void)" in own and "CONFIG_HAVE_GETTID" not in own:  # fio 3.x asks configure first
        for path in [*src.rglob("*.c"), *src.rglob("*.h")]:
            text = path.read_text(errors="surrogateescape")
            if "gettid" in text:
                text = text.replace("__NR_gettid", "\0").replace("gettid", "fio_gettid").replace("\0", "__NR_gettid")
                path.write_text(text, errors="surrogateescape")
        done.append("gettid renamed fio_gettid")
    if any("linux/raw.h" in p.read_text(errors="replace") for p in src.rglob("*.[ch]")):
        (include / "linux").mkdir(parents=True, exist_ok=True)
        (include / "linux" / "raw.h").write_text(RAW_H)
        done.append("stub linux/raw.h")
    return done


def build(git_dir: Path, tag: str, out: Path, log) -> bool:
    with tempfile.TemporaryDirectory(prefix=f"{tag}.") as work:
        src, include = Path(work) / "src", Path(work) / "include"
        src.mkdir()
        include.mkdir()
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", tag], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
        log.write(f"== {tag}: {', '.join(fixed(src, include)) or 'no fixes'}\n")
        flags = f"{FLAGS} -I{include}"
        if (src / "configure").exists():
            ok = run(["./configure", f"--extra-cflags={flags}", "--disable-native"], src, log) or \
                run(["./configure", f"--extra-cflags={flags}"], src, log)
            ok = ok and run(["make", "-j2"], src, log)
        else:
            ok = run(["make", "-j2", f"EXTFLAGS={flags}"], src, log)
        if ok and (src / "fio").exists():
            (out / tag).mkdir(parents=True, exist_ok=True)
            (src / "fio").rename(out / tag / "fio")
            version = subprocess.run([str(out / tag / "fio"), "--version"], capture_output=True, text=True)
            log.write(f"  built: {version.stdout.strip()}\n")
            return True
        log.write(f"  {tag} did not build\n")
        return False


def main(argv: list[str]) -> int:
    git_dir, out, tags = Path(argv[0]), Path(argv[1]), argv[2:]
    out.mkdir(parents=True, exist_ok=True)
    built = []
    with open(out / "build.log", "a") as log:
        for tag in tags:
            if (out / tag / "fio").exists() or build(git_dir, tag, out, log):
                built.append(tag)
    print(f"built {len(built)} of {len(tags)}: {' '.join(built)}")
    return 0 if len(built) == len(tags) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
