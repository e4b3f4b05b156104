"""JupyterLab on the project's environment: ``make lab`` runs this with the venv's Python.

It registers the ``flashscale`` kernel (this Python, with the library installed) in the venv's prefix, then
replaces itself with ``jupyter lab`` listening on localhost only, with notebooks/ open. JupyterLab prints the URL
with its token. Extra arguments go to ``jupyter lab`` (e.g. ``--IdentityProvider.token=...``).

    .venv/bin/python scripts/lab.py [--port 8888] [jupyter lab options ...]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

KERNEL = "flashscale"
ROOT = Path(__file__).resolve().parents[1]


def register_kernel() -> str:
    """The ``flashscale`` kernel spec in this environment's prefix (``--sys-prefix``); its folder."""
    from ipykernel.kernelspec import install

    return install(kernel_name=KERNEL, display_name="Python (flashscale)", prefix=sys.prefix)


def lab_argv(port: int, extra: list[str]) -> list[str]:
    """``jupyter lab`` on 127.0.0.1:``port`` only, no browser, notebooks/ as its root (and as root when we are)."""
    jupyter = Path(sys.executable).with_name("jupyter-lab")
    return [str(jupyter), "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--ServerApp.open_browser=False", f"--ServerApp.root_dir={ROOT / 'notebooks'}",
            f"--MappingKernelManager.default_kernel_name={KERNEL}",
            *(["--allow-root"] if os.geteuid() == 0 else []), *extra]  # root: the loop devices need it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8888)
    args, extra = parser.parse_known_args()
    print(f"Kernel {KERNEL!r} registered in {register_kernel()}", flush=True)
    argv = lab_argv(args.port, extra)
    os.chdir(ROOT)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
