"""Where flashscale's checkout is: its runners/, notebooks/, data/ and reports/ are found from here."""
from __future__ import annotations

from pathlib import Path


def _is_checkout(folder: Path) -> bool:
    return (folder / "pyproject.toml").exists() and (folder / "runners").is_dir()


def project_root(start: Path | None = None) -> Path:
    """The flashscale checkout holding ``start`` (a folder with runners/ and pyproject.toml); failing that, the
    checkout this package was installed from (an editable install); failing that, ``start`` itself."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if _is_checkout(folder):
            return folder
    installed_from = Path(__file__).resolve().parents[2]
    return installed_from if _is_checkout(installed_from) else start
