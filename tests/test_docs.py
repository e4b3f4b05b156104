"""The documentation site (docs/, ``make docs``) builds with every warning an error: a broken link, a page in no
table of contents, a generated reference that no longer matches the code (tests/test_reference_docs.py says which)
fails here. Its reference lists what the code has.
Every ``--help`` is short and names its page; no help text, docstring or page names a module path that does not
import. (Every code block of every page runs in tests/test_readme.py.)
"""
from __future__ import annotations

import ast
import dataclasses
import html
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.analysis.prediction.ceilings import Ceilings
from flashscale.campaigns import cluster, parameters
from flashscale.measure import results

from test_reference_docs import github_anchors

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.relative_to(ROOT).parts)
LAYERS = ("system", "arrays", "measure", "analysis", "publish", "campaigns", "notebooks", "cli", "errors", "paths")
FULL_PATH = re.compile(r"\bflashscale(?:\.[A-Za-z_]\w*)+")
LAYER_PATH = re.compile(r"`{1,2}((?:%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(LAYERS))
# ``flashscale.lock`` (a campaign's lock file) and the like are file names, not module paths.
FILE_SUFFIXES = {"lock", "pyz", "json", "jsonl", "yaml", "yml", "csv", "log", "txt", "md", "html", "parquet", "ipynb"}
PAGE_LINK = re.compile(r"docs/[\w/.-]+?\.md(?:#[\w-]+)?")
DESCRIPTION_LINES = 8  # a command's --help says what it does in a few lines, and where to read the rest
OPTION_HELP_CHARS = 200


def sphinx_build(source: Path, out: Path) -> subprocess.CompletedProcess:
    """The site built as ``make docs`` builds it: every warning an error, every reference checked."""
    argv = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html", str(source), str(out)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = sphinx_build(DOCS, out)
    assert done.returncode == 0, f"the site did not build without a warning:\n{done.stderr[-6000:]}"
    return out


def code_texts(page: Path) -> set[str]:
    """The text of every inline code and table cell of a built page."""
    markup = page.read_text()
    found = re.findall(r"<code[^>]*>(.*?)</code>", markup, re.S)
    return {html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for text in found}


def test_the_site_builds_without_a_warning(site):
    built = {p.relative_to(site).with_suffix("") for p in site.rglob("*.html")}
    assert {p.relative_to(DOCS).with_suffix("") for p in PAGES} <= built
    assert "docs/quickstart-report.png" in (ROOT / "README.md").read_text()


def test_the_readmes_links_lead_to_pages_and_headings_that_exist():
    """The front page is not part of the site's build, so its relative links are checked here: a newcomer reaches
    real devices, many hosts and every parameter in one click."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((?!https?:)([^)\s]+)\)", readme)
    for link in links:
        path, _, anchor = link.partition("#")
        assert (ROOT / path).exists(), f"README.md links to {path}, which does not exist"
        assert not anchor or anchor in anchors(ROOT / path), f"README.md: {path} has no heading #{anchor}"
    assert {"docs/howto/real-devices.md", "docs/howto/many-hosts.md", "docs/reference/parameters.md"} <= set(links)
    assert len(readme.splitlines()) <= 250


def test_the_reference_lists_every_parameter_command_option_column_and_ceiling_key(site):
    reference = site / "reference"
    named = code_texts(reference / "parameters.html")
    assert set(parameters.SCHEMA) | set(parameters.model(cluster.PARTS).model_fields) <= named
    assert set(results.ALL_COLUMNS) <= code_texts(reference / "columns.html")
    assert {f.name for f in dataclasses.fields(Ceilings)} <= code_texts(reference / "ceilings.html")
    commands = (reference / "commands.html").read_text()
    written = code_texts(reference / "commands.html")
    for name, parser in subcommands().items():
        assert f'id="flashscale-{name}"' in commands, f"flashscale {name} has no section"
        for action in [a for a in parser._actions if a.__class__.__name__ != "_HelpAction"]:
            assert any(text.startswith(s) for s in action.option_strings or [action.metavar or action.dest]
                       for text in written), f"flashscale {name}: {action.dest} is not on the page"


def test_a_broken_link_an_orphan_page_or_a_key_the_page_does_not_explain_fails_the_build(tmp_path):
    """The checks the build makes, on a site of three pages built with the real configuration and directives."""
    site = tmp_path / "docs"
    shutil.copytree(DOCS / "_ext", site / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(DOCS / "conf.py", site / "conf.py")
    (site / "index.md").write_text("# Home\n\n[gone](missing.md), [no such heading](other.md#nowhere)\n\n"
                                   "```{toctree}\nother\nstale\n```\n\n<!-- generated by make reference-docs: "
                                   "ceilings\npcie_gen: its generation\n-->\n\n<!-- end of generated text -->\n")
    (site / "stale.md").write_text("# Stale\n\n<!-- generated by make reference-docs: columns -->\n\n| column |\n\n"
                                   "<!-- end of generated text -->\n")
    (site / "other.md").write_text("# Other\n\n## Somewhere\n")
    (site / "orphan.md").write_text("# In no table of contents\n")
    done = sphinx_build(site, tmp_path / "out")
    assert done.returncode != 0
    for said in ("missing.md", "nowhere", "orphan", "'memory_bw_bytes' is a key of Ceilings that the page does not",
                 "docs/stale.md is stale against the code: run make reference-docs"):
        assert said in done.stderr, f"{said!r} not in:\n{done.stderr}"


def subcommands() -> dict:
    (subs,) = [a for a in cli.parser()._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(subs.choices)


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub and the site (myst_heading_anchors) make them."""
    return github_anchors(page)


@pytest.mark.parametrize("name", ["flashscale", *subcommands()])
def test_every_help_is_short_and_names_its_page(name):
    parser = cli.parser() if name == "flashscale" else subcommands()[name]
    description = (parser.description or "").strip()
    assert len(description.splitlines()) <= DESCRIPTION_LINES, f"flashscale {name} --help: say more on its page"
    links = PAGE_LINK.findall(description)
    assert links, f"flashscale {name} --help names no page of docs/"
    for link in links:
        page, _, anchor = link.partition("#")
        assert (ROOT / page).is_file(), f"flashscale {name} --help names {page}, which does not exist"
        assert not anchor or anchor in anchors(ROOT / page), f"{page} has no heading #{anchor}"
    for action in parser._actions:
        assert len(action.help or "") <= OPTION_HELP_CHARS, f"flashscale {name} {action.dest}: a long help"


def resolves(path: str) -> bool:
    """Whether a dotted path imports: the longest importable module, then each attribute of it."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def module_paths(text: str) -> list[str]:
    """The dotted module paths a text names: flashscale.x.y, and ``x.y`` whose first part is a layer."""
    named = [*FULL_PATH.findall(text), *(f"flashscale.{p}" for p in LAYER_PATH.findall(text))]
    return [path.rstrip(".") for path in named if path.rsplit(".", 1)[-1] not in FILE_SUFFIXES]


def docstrings(path: Path):
    """(line, docstring) of a module and each of its classes and functions."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if ast.get_docstring(node):
                yield getattr(node, "lineno", 1), ast.get_docstring(node)


def test_no_help_text_docstring_or_page_names_a_module_path_that_does_not_import():
    texts = [(f"{p.relative_to(ROOT)}:{line}", doc) for p in sorted((ROOT / "lib").rglob("*.py"))
             for line, doc in docstrings(p)]
    for name, parser in {"flashscale": cli.parser(), **subcommands()}.items():
        texts += [(f"flashscale {name} --help", parser.description or "")]
        texts += [(f"flashscale {name} {a.dest} help", a.help or "") for a in parser._actions]
    texts += [(str(p.relative_to(ROOT)), p.read_text()) for p in [ROOT / "README.md", *PAGES]]
    wrong = [f"{where}: {path}" for where, text in texts for path in module_paths(text) if not resolves(path)]
    assert not wrong, "module paths that do not import:\n" + "\n".join(wrong)


def test_a_module_path_that_does_not_import_is_found():
    assert module_paths("See ``flashscale.ceilings.Ceilings`` and ``analysis.summarize``; flashscale.lock") == [
        "flashscale.ceilings.Ceilings", "flashscale.analysis.summarize"]
    assert not resolves("flashscale.ceilings.Ceilings") and not resolves("flashscale.analysis.summarize")
    assert resolves("flashscale.analysis.prediction.ceilings.Ceilings") and resolves("flashscale.analysis.baseline_and_tax.summarize")
