"""The reference is generated into the Markdown of docs/ (``make reference-docs``), so GitHub shows what the site
shows: a page whose generated text no longer matches the code fails here, naming the command that refreshes it; no
``{flashscale-*}`` directive is left for GitHub to show as raw text; and every anchor that a ``--help``, a message
of the library, the README or a page cites is a heading of the Markdown, as GitHub makes its anchors.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import flashscale_docs  # noqa: E402
import flashscale_reference  # noqa: E402

PAGES = flashscale_docs.pages(DOCS)
CITED = re.compile(r"\bdocs/([\w/.-]+?\.md)#([\w-]+)")
LINK = re.compile(r"\]\((?!https?:|mailto:)([^)\s]*?)(?:#([^)\s]+))?\)")
HEADING = re.compile(r"^(#{1,3}) +(.+?) *#*$", re.M)  # the site (myst_heading_anchors = 3) anchors these levels
FENCED = re.compile(r"^ {0,3}(```+|~~~+).*?^ {0,3}\1\s*$", re.M | re.S)


def github_anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the text as shown (no code ticks, a link's text), lower case, every
    character but letters, digits, ``_``, ``-`` and spaces dropped, each space a ``-``."""
    shown = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    shown = re.sub(r"\\(.)", r"\1", shown)
    return re.sub(r"[^\w\- ]", "", shown.strip().lower()).replace(" ", "-")


def github_anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (levels 1-3, outside code blocks), a repeated one numbered as GitHub does."""
    found: set[str] = set()
    for _, text in HEADING.findall(FENCED.sub("", page.read_text())):
        anchor = base = github_anchor(text)
        n = 0
        while anchor in found:
            n += 1
            anchor = f"{base}-{n}"
        found.add(anchor)
    return found


def test_the_generated_reference_is_what_the_code_makes_now():
    stale = flashscale_docs.stale(DOCS)
    assert not stale, ("stale against the code (run make reference-docs): "
                       + ", ".join(str(p.relative_to(ROOT)) for p in stale))


def test_no_page_holds_a_directive_that_github_cannot_show():
    held = [f"{p.relative_to(ROOT)}:{n}" for p in PAGES for n, line in enumerate(p.read_text().splitlines(), 1)
            if "{flashscale-" in line]
    assert not held, f"{{flashscale-*}} blocks left (generate them into the page instead): {held}"


def help_texts() -> dict[str, str]:
    """Every ``--help`` text of the command: each command's description and each option's help."""
    texts = {}
    for name, parser in flashscale_reference.commands().items():
        texts[f"flashscale {name} --help"] = parser.description or ""
        texts.update({f"flashscale {name} {a.dest} help": a.help or "" for a in parser._actions
                      if not isinstance(a, argparse._HelpAction) and a.help})
    return texts


def cited_anchors() -> list[tuple[str, Path, str]]:
    """(where, page, anchor) of every anchor cited: in the --help texts and the library's sources as
    docs/PAGE.md#anchor, in the README's and the pages' links (relative, or #anchor on the page itself)."""
    texts = {**help_texts(), **{str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "lib").rglob("*.py"))}}
    cited = [(where, DOCS / page, anchor) for where, text in texts.items() for page, anchor in CITED.findall(text)]
    for page in [ROOT / "README.md", *PAGES]:
        for target, anchor in LINK.findall(FENCED.sub("", page.read_text())):
            if anchor:
                cited.append((str(page.relative_to(ROOT)), (page.parent / target).resolve() if target else page,
                              anchor))
    return cited


def test_every_anchor_the_help_the_library_and_the_pages_cite_is_a_heading_on_github():
    cited = cited_anchors()
    assert {"flashscale-analyze", "flashscale-run", "8-after-a-crash-use-flashscale-reap"} <= {a for _, _, a in cited}
    missing = [f"{where}: {page.relative_to(ROOT)}#{anchor}" for where, page, anchor in cited
               if not page.is_file() or anchor not in github_anchors(page)]
    assert not missing, "anchors no heading of the Markdown makes:\n" + "\n".join(missing)


def test_the_commands_page_has_a_heading_for_every_command():
    anchors = github_anchors(DOCS / "reference" / "commands.md")
    names = list(flashscale_reference.commands())
    assert len(names) > 5 and {"flashscale", *(f"flashscale-{name}" for name in names[1:])} <= anchors


def test_github_anchors_are_made_as_github_makes_them(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Every command\n\n## flashscale vm-guest\n\n## 8. After a crash: use `flashscale reap`\n\n"
                    "### The [VM lab](x.md)'s numbers\n\n## Again\n\n## Again\n\n#### Too deep\n\n"
                    "```text\n# not a heading\n```\n")
    assert github_anchors(page) == {"every-command", "flashscale-vm-guest", "8-after-a-crash-use-flashscale-reap",
                                    "the-vm-labs-numbers", "again", "again-1"}


def marked(kind: str, text: str = "", body: str = "") -> str:
    """A page's generated block of ``kind``, holding ``text``."""
    head = f"<!-- generated by make reference-docs: {kind}"
    return "\n".join([f"{head} -->"] if not body else [head, body, "-->"]) + f"\n\n{text}\n\n{flashscale_docs.END}\n"


def test_a_stale_page_is_found_rewritten_and_named(tmp_path):
    docs = tmp_path / "docs"
    (docs / "reference").mkdir(parents=True)
    page = docs / "reference" / "columns.md"
    page.write_text("# Columns\n\n" + marked("columns", "| column | type | meaning |\n| --- | --- | --- |"))
    check = [sys.executable, str(ROOT / "scripts" / "reference_docs.py"), "--docs", str(docs), "--check"]
    done = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "columns.md is stale against the code: run make reference-docs" in done.stderr
    assert page.read_text().count("\n| `") == 0
    subprocess.run(check[:-1], check=True, capture_output=True, timeout=120)
    assert "| `bw_bytes` |" in page.read_text()
    assert subprocess.run(check, capture_output=True, timeout=120).returncode == 0


def test_a_new_command_gets_its_section_and_a_gone_one_is_named():
    page = Path("reference/commands.md")
    text = regenerated = flashscale_docs.regenerate("# Commands\n\n" + marked("command run") + "\nMore on run.\n", page)
    assert "## flashscale run" in text and "More on run." in text
    for name in flashscale_reference.commands():
        assert text.count(f"generated by make reference-docs: command {name} -->") == 1, name
    assert flashscale_docs.regenerate(regenerated, page) == regenerated
    with pytest.raises(flashscale_reference.ReferenceMismatch, match=r"commands.md:3: .*'gone' is no command"):
        flashscale_docs.regenerate("# Commands\n\n" + marked("command gone"), page)


def test_a_key_the_page_does_not_explain_or_a_mark_without_its_end_is_named():
    page = Path("reference/ceilings.md")
    with pytest.raises(flashscale_reference.ReferenceMismatch, match="'memory_bw_bytes' is a key of Ceilings that"):
        flashscale_docs.regenerate(marked("ceilings", body="pcie_gen: its generation"), page)
    with pytest.raises(flashscale_reference.ReferenceMismatch, match="ceilings.md:2: a generated text without its"):
        flashscale_docs.regenerate("text\n<!-- generated by make reference-docs: columns -->\n\n| old |\n", page)


def test_links_in_generated_text_are_relative_to_the_page_they_land_on():
    said = flashscale_reference.prose("see docs/howto/vm-lab.md and docs/reference/commands.md#flashscale-run",
                                      Path("reference/parameters.md"))
    assert "(../howto/vm-lab.md)" in said and "(commands.md#flashscale-run)" in said
