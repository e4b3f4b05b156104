"""One margin in one report: every notebook that declares TAX_MARGIN hands it to each call that reads a number
against a margin (the tax's verdict, the predictions' agreement, their drift and re-read sentences), so that no
sentence of a report falls back on the 2% default while its verdicts use another."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# the calls whose last word is a margin, by their name
READ_AGAINST_A_MARGIN = {"against", "outside_sentences", "at_best_sentences", "unexplained_sentences",
                         "undecided_sentences", "summary_intervals", "tax_by_threads", "summarize"}


def _calls(notebook: Path) -> list[ast.Call]:
    code = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]
                     if c["cell_type"] == "code")
    return [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in READ_AGAINST_A_MARGIN]


def _passes_the_margin(call: ast.Call) -> bool:
    given = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(v, ast.Name) and v.id == "TAX_MARGIN" for v in given)


@pytest.mark.parametrize("notebook", sorted(p for p in NOTEBOOKS.glob("*.ipynb") if "TAX_MARGIN =" in p.read_text()),
                         ids=lambda p: p.stem)
def test_every_call_that_reads_a_margin_is_given_the_report_s(notebook):
    calls = _calls(notebook)
    missing = [ast.unparse(c) for c in calls if not _passes_the_margin(c)
               and not (c.func.attr == "summarize" and "core" in ast.unparse(c.func))]  # core's has no verdict
    assert missing == [], f"{notebook.name} reads against the default margin: {missing}"


def test_the_check_is_not_vacuous():
    """A call without the margin, as 10_cluster's scoring was, is caught."""
    call = ast.parse("scoring.outside_sentences(scored)").body[0].value
    assert not _passes_the_margin(call)
    assert _passes_the_margin(ast.parse("scoring.outside_sentences(scored, TAX_MARGIN)").body[0].value)
    assert any(c.func.attr == "against" for c in _calls(NOTEBOOKS / "quickstart.ipynb"))
