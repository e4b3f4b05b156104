"""Tests that test the code, not the machine: no test compares a computed floating-point number exactly, and none
bounds the wall-clock time of what it runs. Floating-point results differ in their last bits across CPUs and
libraries (scipy's tax bounds did, on a fresh clone elsewhere), and a time bound tests the machine's speed; speed
targets live in ``make bench``, as ratios measured side by side.

The check reads every test module's syntax tree: an ``==`` or ``!=`` with a float literal or a true division on one
side (``x == 0.5``, ``x == a / b``) outside ``pytest.approx``; ``round(...)`` compared exactly; ``check_exact=True``;
and ``time.monotonic()`` / ``time.time()`` / ``time.perf_counter()`` differences compared with ``<`` or ``>``."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
PATH_WORDS = ("path", "docs", "checkout", "folder", "root", "tmp", "share", "directory", "dir")
CLOCKS = ("monotonic", "time", "perf_counter")


def _float_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _float_literal(node.operand)
    return isinstance(node, ast.Constant) and isinstance(node.value, float)


def _computed_float(node: ast.AST) -> bool:
    """A float literal, or arithmetic with one or a true division in it (not a path joined with ``/``)."""
    if _float_literal(node):
        return True
    if not isinstance(node, ast.BinOp):
        return False
    inner = list(ast.walk(node))
    if any(isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) for n in inner):
        return False
    names = [n.id for n in inner if isinstance(n, ast.Name)] + [n.attr for n in inner if isinstance(n, ast.Attribute)]
    if any(word in name.lower() for name in names for word in PATH_WORDS):
        return False
    return any(isinstance(n, ast.Div) for n in inner) or any(_float_literal(n) for n in inner)


def _clock_difference(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CLOCKS
        for n in ast.walk(node.left))


def findings(text: str) -> list[tuple[int, str]]:
    """Each exact float comparison, exact ``check_exact``, rounded equality and clock bound asserted in ``text`` (a
    deadline that ends a wait for a stated behaviour, ``while time.monotonic() - t0 < END_S``, is no assertion)."""
    found = []
    tree = ast.parse(text)
    asserted = {id(n) for a in ast.walk(tree) if isinstance(a, ast.Assert) for n in ast.walk(a)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            said = ast.get_source_segment(text, node) or ""
            exact = any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
            if exact and "approx" not in said and any(_computed_float(s) for s in sides):
                found.append((node.lineno, f"computed float compared exactly: {said[:100]}"))
            if exact and any(isinstance(s, ast.Call) and getattr(s.func, "id", "") == "round" and
                             any(_float_literal(a) or isinstance(a, ast.Constant) for a in s.args[1:]) for s in sides):
                found.append((node.lineno, f"a float rounded, then compared exactly: {said[:100]}"))
            if id(node) in asserted and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops) \
                    and any(_clock_difference(s) for s in sides):
                found.append((node.lineno, f"a wall-clock bound: {said[:100]}"))
        if isinstance(node, ast.keyword) and node.arg == "check_exact" and \
                isinstance(node.value, ast.Constant) and node.value.value is True:
            found.append((node.lineno, "check_exact=True"))
    return found


def test_no_test_compares_a_computed_float_exactly_or_bounds_the_wall_clock():
    bad = [f"{path.name}:{line}: {what}" for path in sorted(TESTS.rglob("test_*.py"))
           for line, what in findings(path.read_text())]
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize("text", ["assert x == 0.5", "assert f(x) == a / b", "assert x != -1e-3",
                                  "assert round(x * 100, 1) == 9", "frame_equal(a, b, check_exact=True)",
                                  "assert time.monotonic() - t0 < 10"])
def test_the_check_finds_each_kind(text):
    assert len(findings(text)) == 1, findings(text)


@pytest.mark.parametrize("text", ["assert x == pytest.approx(0.5)", "assert p == tmp_path / 'x'", "assert n == 4",
                                  "assert s == 'a' / 'b'", "assert round(x / 1024) == 10577"])
def test_the_check_lets_pass_what_is_exact(text):
    assert findings(text) == []


def test_a_deadline_that_ends_a_wait_is_no_wall_clock_bound():
    assert findings("while time.monotonic() - t0 < 30 and busy():\n    pass") == []
