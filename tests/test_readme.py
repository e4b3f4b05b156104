"""The README and every page of the documentation (docs/**/*.md) are tested: every code block a reader would copy
runs here or says why not. (Their reference tables are generated from the code into the pages by make
reference-docs: tests/test_reference_docs.py.)

Each fenced block of a language a reader runs (python, a shell, yaml) carries a mark on the line before its fence:

    <!-- doc: run -->              run here in a fresh folder that sees the checkout's files (python with this venv's
                                   Python, a shell block with bash -e); yaml is loaded as the file it is: a campaign
                                   (checked as flashscale run checks it), a test bed, or ceilings
    <!-- doc: run as root -->      the same as root (marker ``root``), on loop devices of the test's own that stand in
                                   for the documentation's test bed (its identities, full or shortened as nguid:...01)
    <!-- doc: not run: REASON -->  not run here; the reason says why and names the test that covers the same path
    <!-- doc: file PATH -->        the block is the checkout's file PATH, byte for byte or as the same YAML

An unmarked block, a fence without a language, an indented code block (whose language nobody said) or a mark
without its reason fails, naming its line. Blocks of other languages (``text``: output, a formula) are not run.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from flashscale.campaigns import cluster
from flashscale.notebooks import execute
from flashscale.analysis.prediction import ceilings
from flashscale.arrays.testbed import TestBed

from conftest import loop_backing_file

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The pages whose code blocks are run: the README and every page of the site (not what a build left in _build).
PAGES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.relative_to(ROOT).parts)]
LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell", "shell": "shell",
             "console": "shell", "yaml": "yaml", "yml": "yaml"}
FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([^\s`]*)")
MARK = re.compile(r"<!-- doc: (.*?) -->")
TEST_NAMED = re.compile(r"tests/[\w/]+\.py(?:::\w+)?")
TIMEOUT_S = 120
MiB = 2**20
STAND_IN_BYTES = 256 * MiB  # btrfs-raid0 wants more than 109 MiB a device


@dataclass(frozen=True)
class Block:
    """A code block of a Markdown text: the page it is on (relative to the checkout), the line of its opening fence
    (from 1), the heading it is under, its language (``indented`` for an indented code block), the mark on the line
    before it (None: unmarked)."""

    source: str
    line: int
    heading: str
    language: str
    mark: str | None
    text: str

    @property
    def kind(self) -> str | None:
        """python, shell or yaml: what the block is run as; None for a language nobody runs (text)."""
        return LANGUAGES.get(self.language)

    @property
    def how(self) -> tuple[str, str]:
        """The mark read: (run | run as root | not run | file | '', its reason or path)."""
        mark = self.mark or ""
        if mark in ("run", "run as root"):
            return mark, ""
        for word in ("not run:", "file "):
            if mark.startswith(word):
                return word.rstrip(": "), mark[len(word):].strip()
        return "", mark

    @property
    def id(self) -> str:
        page = self.source.removeprefix("docs/").removesuffix(".md")
        return f"{page}-L{self.line}-" + re.sub(r"[^a-z0-9]+", "-", self.heading.lower()).strip("-")[:40]

    @property
    def where(self) -> str:
        return f"{self.source} line {self.line} ({self.heading})"


def _list_content(lines: list[str], i: int) -> bool:
    """Whether line ``i`` (indented, after a blank line) continues a list item rather than starting code."""
    previous = next((line for line in reversed(lines[:i]) if line.strip()), "")
    return bool(re.match(r"\s*([-*+]|\d+[.)])\s|\s+\S", previous))


def code_blocks(text: str, source: str = "README.md") -> list[Block]:
    """Every fenced and indented code block of a Markdown text (the page ``source``), in order."""
    blocks, heading, lines, i = [], "top", text.splitlines(), 0
    while i < len(lines):
        line, fence = lines[i], FENCE.match(lines[i])
        mark = MARK.fullmatch(lines[i - 1].strip()) if i else None
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence[1])), len(lines))
            blocks.append(Block(source, i + 1, heading, fence[2].lower(), mark and mark[1].strip(),
                                "".join(f"{body}\n" for body in lines[i + 1:end])))
            i = end + 1
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("    ") and line.strip() and i and not lines[i - 1].strip() and not _list_content(lines, i):
            end = next((j for j in range(i, len(lines)) if lines[j].strip() and not lines[j].startswith("    ")),
                       len(lines))
            blocks.append(Block(source, i + 1, heading, "indented", mark and mark[1].strip(),
                                "".join(f"{body[4:]}\n" for body in lines[i:end])))
            i = end
            continue
        i += 1
    return blocks


def unmarked(block: Block) -> str | None:
    """What is wrong with a block's language or mark, naming its line; None when it says how it is tested."""
    where = block.where
    if block.language == "indented":
        return f"{where}: an indented code block; fence it with its language (```sh, ```python, ```yaml, ```text)"
    if not block.language:
        return f"{where}: a fence without a language; say it (```sh, ```python, ```yaml, ```text)"
    if block.kind is None:
        return None
    how, argument = block.how
    if not how:
        return (f"{where}: a {block.language} block without a mark; put <!-- doc: run -->, <!-- doc: run as "
                f"root -->, <!-- doc: not run: REASON --> or <!-- doc: file PATH --> on the line before it"
                + (f" (its mark {argument!r} is none of these)" if argument else ""))
    if how in ("not run", "file") and not argument:
        return f"{where}: <!-- doc: {how}: --> needs its {'reason' if how == 'not run' else 'path'}"
    return None


BLOCKS = [block for page in PAGES for block in code_blocks(page.read_text(), str(page.relative_to(ROOT)))]
MARKED = [block for block in BLOCKS if block.kind is not None or block.language in ("", "indented")]


def _testbed_ids() -> list[str]:
    """The identities of the documentation's test bed file: what its other examples name."""
    beds = [yaml.safe_load(b.text) for b in BLOCKS if b.kind == "yaml" and "\ndevices:" in "\n" + b.text]
    assert len(beds) == 1, "the documentation should show one test bed file"
    return beds[0]["devices"]


def _param(block: Block):
    root = block.how[0] == "run as root"
    return pytest.param(block, id=block.id, marks=[pytest.mark.root] if root else [])


def reader_folder(tmp_path: Path) -> Path:
    """A fresh folder seeing the checkout's files by their relative names: what a block writes stays here."""
    folder = tmp_path / "reader"
    folder.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (folder / entry.name).symlink_to(entry)
    return folder


def run_code(block: Block, code: str, cwd: Path) -> subprocess.CompletedProcess:
    """A python or shell block run as a reader runs it: the venv's Python and its flashscale command first on
    PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if block.kind == "python":
        argv = [sys.executable, "-c", code]
    else:
        if block.language == "console":  # commands after the prompt; the rest is their output
            code = "".join(line[2:] + "\n" for line in code.splitlines() if line.startswith("$ "))
        argv = ["bash", "-e", "-c", code]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, (f"{block.where} exited {done.returncode}:\n"
                                  f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return done


def load_yaml(block: Block, folder: Path) -> None:
    """A yaml block loaded as the file it is: a campaign as flashscale run checks it before anything runs (each
    notebook's parameters, with the values its parameters cell gives), a test bed, or ceilings for analyze."""
    data = yaml.safe_load(block.text)
    assert isinstance(data, dict), f"{block.where}: not a YAML mapping"
    if "campaign" in data:
        path = folder / "campaign.yaml"
        path.write_text(block.text)
        assert execute.notebook_parameters(execute.load_campaign(path), ROOT)
    elif "devices" in data:
        path = folder / "testbed.yaml"
        path.write_text(block.text)
        assert list(TestBed.load(path).ids) == data["devices"]
    else:
        ceilings.Ceilings.from_mapping(data)


def stand_in_text(text: str, stand_ins: dict[str, str]) -> str:
    """``text`` with the documentation's identities replaced by those of the test's loop devices, longest first."""
    for ident in sorted(stand_ins, key=len, reverse=True):
        text = text.replace(ident, stand_ins[ident])
    return text


@pytest.fixture
def stand_ins(tmp_path):
    """Loop devices of the test's own, one for each identity of the documentation's test bed (with random data where
    a file system would be), and its identities of them, full and as its shortened ``nguid:...01``."""
    from test_guard_loop import Loops

    loops = Loops(tmp_path)
    try:
        named = {ident: loops.make(size=STAND_IN_BYTES) for ident in _testbed_ids()}
        shortened = {f"{ident.split(':')[0]}:...{ident[-2:]}": device for ident, device in named.items()}
        yield {"devices": list(named.values()), "ids": {i: d.id for i, d in {**named, **shortened}.items()}}
    finally:
        loops.close()


def written(device) -> list[bytes]:
    """The three MiB of random data ``Loops`` wrote on a stand-in (its start, middle and end), as they read now:
    where a file system, an array's superblock or an erase writes first (reading it all takes seconds)."""
    with open(device.path, "rb") as fh:
        return [(fh.seek(offset), fh.read(MiB))[1] for offset in (0, STAND_IN_BYTES // 2, STAND_IN_BYTES - MiB)]


def run_as_root(block: Block, code: str, stand_ins: dict, folder: Path) -> subprocess.CompletedProcess:
    """A block run on the stand-ins, beside the documentation's test bed file naming them; afterwards each stand-in
    is still attached to its own backing file and mounted nowhere."""
    (folder / "testbed.yaml").write_text(stand_in_text(_testbed_block().text, stand_ins["ids"]))
    done = run_code(block, stand_in_text(code, stand_ins["ids"]), folder)
    for device in stand_ins["devices"]:
        assert loop_backing_file(device.path) == device.id.removeprefix("loop:")
        assert device.path not in {line.split()[0] for line in Path("/proc/mounts").read_text().splitlines()}
    return done


def _testbed_block() -> Block:
    (block,) = [b for b in BLOCKS if b.kind == "yaml" and "\ndevices:" in "\n" + b.text]
    return block


@pytest.mark.parametrize("block", [_param(block) for block in MARKED])
def test_each_block_runs_or_says_why_not(block, tmp_path, request):
    problem = unmarked(block)
    assert problem is None, problem
    how, argument = block.how
    if how == "not run":
        for named in TEST_NAMED.findall(argument):  # the covering test it names exists
            path, _, name = named.partition("::")
            assert (ROOT / path).is_file(), f"{block.where} names {path}, which does not exist"
            assert not name or f"def {name}(" in (ROOT / path).read_text(), f"{path} has no test {name}"
    elif how == "file":
        path = ROOT / argument
        assert path.is_file(), f"{block.where} is the file {argument}, which the checkout lacks"
        same = block.text == path.read_text() or (
            block.kind == "yaml" and yaml.safe_load(block.text) == yaml.safe_load(path.read_text()))
        assert same, f"{block.where} differs from {argument}"
    elif block.kind == "yaml":
        load_yaml(block, tmp_path)
    elif how == "run":
        run_code(block, block.text, reader_folder(tmp_path))
    else:
        run_as_root(block, block.text, request.getfixturevalue("stand_ins"), reader_folder(tmp_path))


def with_parameters(code: str, **values) -> str:
    """``code`` with each ``NAME = ...`` line of its parameters set to ``values``, as papermill sets a cell's."""
    for name, value in values.items():
        line = re.compile(rf"^{name} = .*$", re.M)
        assert len(line.findall(code)) == 1, f"the block has no single {name} = line"
        code = line.sub(lambda _: f"{name} = {value!r}", code)
    return code


def _layouts_example() -> Block:
    (block,) = [b for b in BLOCKS if b.kind == "python" and "layouts.build(" in b.text]
    return block


@pytest.mark.root
def test_the_layouts_example_plans_touching_nothing_then_builds_and_undoes_what_it_planned(stand_ins, tmp_path):
    """As printed, a dry run: the guard reads the devices and nothing is written. With DRY_RUN = False on a layout
    this kernel has (md is not in every kernel), it erases, builds, mounts and undoes it all."""
    block, folder, devices = _layouts_example(), reader_folder(tmp_path), stand_ins["devices"]
    before = [written(d) for d in devices]
    planned = run_as_root(block, block.text, stand_ins, folder).stdout
    assert [written(d) for d in devices] == before
    assert all(f"blkdiscard {d.path}" in planned for d in devices)
    built = run_as_root(block, with_parameters(block.text, LAYOUT="btrfs-raid0", DRY_RUN=False), stand_ins,
                        folder).stdout
    assert "mkfs.btrfs" in built and all(f"blkdiscard {d.path}" in built for d in devices)
    (mounted,) = [line.split()[1:] for line in built.splitlines() if line.startswith("mounted:")]
    assert mounted and not any(Path(target).exists() for target in mounted)  # unmounted and removed
    assert [written(d) for d in devices] != before


@pytest.mark.root
def test_the_erase_example_dry_runs_then_erases_the_named_devices_and_records_them(stand_ins, tmp_path):
    """Its first line, a dry run, writes nothing; the whole block erases both devices and records each."""
    (block,) = [b for b in BLOCKS if b.kind == "shell" and b.text.startswith("flashscale erase ")]
    folder, devices = reader_folder(tmp_path), stand_ins["devices"]
    before = [written(d) for d in devices]
    dry = block.text.splitlines()[0]
    assert dry.endswith(" --dry-run")
    run_as_root(block, dry, stand_ins, folder)
    assert [written(d) for d in devices] == before
    run_as_root(block, block.text, stand_ins, folder)
    records = [json.loads(line) for line in (folder / "erase-log.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [d.id for d in devices]
    assert all(region == bytes(MiB) for d in devices for region in written(d))  # discarded: zeros


def test_a_block_without_a_mark_or_a_reason_fails_naming_its_line():
    text = ("# Try it\n\n```python\nprint(1)\n```\n\n<!-- doc: not run: -->\n```sh\nmake demo\n```\n\n"
            "Output:\n\n    make demo\n\n```\nls\n```\n\n<!-- doc: run -->\n```yaml\na: 1\n```\n\n```text\nok\n```\n"
            "\n<!-- readme: run -->\n```sh\nls\n```\n")
    problems = [unmarked(block) for block in code_blocks(text, "docs/howto/x.md")]
    assert problems[0].startswith("docs/howto/x.md line 3 (Try it): a python block without a mark")
    assert problems[1].startswith("docs/howto/x.md line 8 (Try it): <!-- doc: not run: --> needs its reason")
    assert problems[2].startswith("docs/howto/x.md line 14 (Try it): an indented code block")
    assert problems[3].startswith("docs/howto/x.md line 16 (Try it): a fence without a language")
    assert problems[4:6] == [None, None]
    assert problems[6].startswith("docs/howto/x.md line 30 (Try it): a sh block without a mark")  # the old mark


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_mark_stands_before_a_block(page):
    marks = [n for n, line in enumerate(page.read_text().splitlines(), 1) if MARK.fullmatch(line.strip())]
    source = str(page.relative_to(ROOT))
    assert marks == [block.line - 1 for block in BLOCKS if block.source == source and block.mark is not None]
    assert "<!-- readme:" not in page.read_text(), f"{source}: the marks are <!-- doc: ... --> now"


def documented_campaigns() -> list[str]:
    """The documentation's campaign files: its yaml blocks with a ``campaign:`` key."""
    return [b.text for b in BLOCKS if b.kind == "yaml" and "\ncampaign:" in "\n" + b.text]


def test_the_cluster_campaign_over_real_hosts_is_accepted_as_written(tmp_path):
    """A reader copies it: it must load, and its hosts must make a cluster spec (it once said link_bps: 12.0e9,
    which YAML reads as a string, and HOSTS: [1, 2, 4] over two hosts)."""
    (cluster_file,) = [text for text in documented_campaigns() if "REMOTE_HOSTS" in text]
    path = tmp_path / "my-cluster.yaml"
    path.write_text(cluster_file)
    loaded = execute.load_campaign(path)
    spec = cluster.ClusterSpec.from_parameters(CAMPAIGN=loaded["campaign"], **loaded["parameters"])
    assert [host.link_bps for host in spec.remote] == [12e9, 12e9] and max(spec.hosts) == len(spec.remote)
    execute.check_parameters(ROOT / "notebooks" / "10_cluster.ipynb", loaded["parameters"])
