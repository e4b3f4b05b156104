"""``flashscale compare A B``: the comparison made once, for the command's table and for its report notebook, and
that report executed and published (``--report DIR``).

    compared = compare("before", "after", margin=None, metric="")   both sides read, the margin chosen, every
                                                                     change, what differs, the sentence
    report("before", "after", "out")                                 notebooks/compare.ipynb executed by papermill
                                                                     into out/compare.ipynb, and out/compare.html

The report runs as ``flashscale run`` runs a campaign's notebooks (``execute.execute_notebook``, in the checkout,
its kernel on unix sockets; ``publish.report.export_html``): papermill records A, B and the rest in the executed
notebook, which records its numbers (``records.compare``). A side is given to the notebook as an absolute path (an
archive query's file too), since the notebook runs in the checkout, not where the command was typed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import execute
from .. import errors
from ..analysis import campaign_diff, defaults, environment_diff
from ..analysis.agreement import check_margin
from ..measure import sides
from ..paths import project_root
from ..publish.report import export_html

NOTEBOOK = "compare"  # notebooks/compare.ipynb; executed as <DIR>/compare.ipynb, published as <DIR>/compare.html


@dataclass(frozen=True)
class Comparison:
    """Two campaigns compared: the sides, the margin and where it came from, every change (``campaign_diff.changes``,
    largest first), the points in one only, what differs between their environments, and the sentence."""

    a: sides.Side
    b: sides.Side
    margin: float
    margin_note: str
    changed: pd.DataFrame
    alone: pd.DataFrame
    differs: pd.DataFrame
    said: str


def margin_of(given: float | None, pair) -> tuple[float, str]:
    """The margin and where it came from: ``given``, else A's TAX_MARGIN, else B's, else the default; the note says
    a stated margin that differs from the one used."""
    stated = []
    for name, side in zip("AB", pair):
        for record in side.records:
            value = (record.get("spec") or {}).get("tax_margin") if isinstance(record.get("spec"), dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1:
                stated.append((name, float(value)))
    margin = check_margin(given) if given is not None else (stated[0][1] if stated else defaults.DEFAULT_MARGIN)
    source = "--margin" if given is not None else (f"{stated[0][0]}'s TAX_MARGIN" if stated else "default")
    others = sorted({f"{n} stated {100 * v:g}%" for n, v in stated if abs(v - margin) > 1e-12})
    return margin, f"margin {100 * margin:g}% ({source}" + (f"; {', '.join(others)})" if others else ")")


def _environment(side: sides.Side) -> dict[str, str]:
    return environment_diff.combined([environment_diff.facts(r, side.rows) for r in side.records]
                                     or [environment_diff.facts(None, side.rows)])


def compare(a: str, b: str, margin: float | None = None, confidence: float = 0.95, metric=None) -> Comparison:
    """A and B (``measure.sides``: a folder, a table or an archive query) compared at ``margin`` (``margin_of``)
    on ``metric`` (``campaign_diff.chosen``: all three for None or "")."""
    pair = sides.read(a), sides.read(b)
    chosen, note = margin_of(margin, pair)
    changed = campaign_diff.changes(pair[0].rows, pair[1].rows, chosen, confidence, metric or None)
    _, alone = campaign_diff.points(pair[0].rows, pair[1].rows)
    differs = environment_diff.differences(_environment(pair[0]), _environment(pair[1]))
    return Comparison(*pair, chosen, note, changed, alone, differs, campaign_diff.sentence(changed, alone))


def absolute(side: str) -> str:
    """A side as the notebook, run in the checkout, must be given it: a path made absolute, an archive query's
    file too (its filters kept)."""
    if side.startswith(sides.PREFIX):
        file, mark, query = side[len(sides.PREFIX):].partition("?")
        return f"{sides.PREFIX}{Path(file).resolve()}{mark}{query}"
    return str(Path(side).resolve())


def report_folder(out: str | Path) -> Path:
    """The folder ``--report`` names, made where absent; ConfigError naming it where it is a file or cannot be made
    (checked before the comparison runs)."""
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise errors.ConfigError(f"--report {str(out)!r:.200}: cannot be made a folder ({exc.strerror})") from None
    return folder


def report(a: str, b: str, out: str | Path, margin: float | None = None, confidence: float = 0.95,
           metric: str = "") -> Path:
    """notebooks/compare.ipynb executed on A and B into ``out``/compare.ipynb and published as compare.html (module
    doc); returns the HTML. A notebook that stops raises its error's kind, naming the executed notebook."""
    import papermill

    root = project_root()
    executed = report_folder(out) / f"{NOTEBOOK}.ipynb"
    given = {"A": absolute(a), "B": absolute(b), "MARGIN": margin, "CONFIDENCE": confidence, "METRIC": metric or ""}
    try:
        execute.execute_notebook(execute.notebook_path(NOTEBOOK, root), executed, given, root, progress_bar=False)
    except papermill.PapermillExecutionError as exc:
        raise errors.kind(exc.ename)(f"{NOTEBOOK}.ipynb stopped with {exc.ename}: {exc.evalue} (the executed "
                                     f"notebook is {executed})") from None
    return export_html(executed, executed.with_suffix(".html"))


def folders(*given: str) -> list[str] | None:
    """The sides that are folders (their campaign.json says what measured them: ``report.how_made``); None where
    neither is (tables and archive queries: the report reads numbers kept earlier)."""
    found = [side for side in given if not side.startswith(sides.PREFIX) and Path(side).is_dir()]
    return found or None
