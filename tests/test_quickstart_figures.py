"""One figure for the quickstart's size: docs/quickstart-figures.yaml holds its fio runs, its measured runs and its
device and wall time as ``flashscale run runners/quickstart.yaml --estimate`` computes them; every run count or
device time that the README, a page of docs/ or a runner states in a sentence about the quickstart is one of them.
A sentence about another setting of it (a precision target, another MAX_REPETITIONS) states that setting's own
measurement and is left out.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from flashscale.notebooks import execute

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "runners" / "quickstart.yaml"
FIGURES = yaml.safe_load((ROOT / "docs" / "quickstart-figures.yaml").read_text())
SOURCES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts),
           *sorted((ROOT / "runners").glob("*.yaml"))]
QUICKSTART = re.compile(r"quickstart(?![\w-])|make demo(?![\w-])")
OTHER_SETTING = re.compile(r"precis|PRECISION|MAX_REPETITIONS|--estimate")
RUNS = re.compile(r"\b(\d[\d,]*) (?:fio |measured )?runs\b")
A_POINTS = 10  # at most a point's runs (3 runs of 5 s, MAX_REPETITIONS up to 10), not a campaign's
DEVICE_S = re.compile(r"\b(\d[\d,.]*) s of device time\b")


def sentences(path: Path):
    """(line, sentence) of a file: paragraphs (lines between blank ones, comment marks dropped) cut at '. '."""
    start, held = 0, []
    for n, line in enumerate([*path.read_text().splitlines(), ""], 1):
        if line.strip():
            start = start if held else n
            held.append(re.sub(r"^#+ ?", "", line) if path.suffix == ".yaml" else line)
            continue
        for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z(`*])", " ".join(held)):
            yield start, sentence
        held = []


def mentions(sources=SOURCES, root=ROOT):
    """(where, what, the number said) of each run count and device time said of the quickstart at its defaults."""
    for path in sources:
        for line, sentence in sentences(path):
            if not QUICKSTART.search(sentence) or OTHER_SETTING.search(sentence):
                continue
            where = f"{path.relative_to(root)}:{line}"
            counts = (int(f[1].replace(",", "")) for f in RUNS.finditer(sentence))
            yield from ((where, "runs", n) for n in counts if n > A_POINTS)
            yield from ((where, "device_s", float(f[1].replace(",", ""))) for f in DEVICE_S.finditer(sentence))


def test_the_figures_are_the_campaigns_own_estimate():
    spec = execute.load_campaign(CAMPAIGN)
    values = execute.notebook_values(spec, ROOT, None)
    (notebook,) = values.values()
    _, whole = execute.estimate_campaign(CAMPAIGN)
    per_run_s = notebook["RAMP_S"] + notebook["RUNTIME_S"]
    assert whole.runs == (FIGURES["runs"], FIGURES["runs"])
    assert whole.parts["measure"][1] / per_run_s == pytest.approx(FIGURES["measured_runs"])
    assert whole.device_s[1] == pytest.approx(FIGURES["device_s"], abs=0.5)
    assert whole.wall_s[1] == pytest.approx(FIGURES["wall_s"], abs=0.5)


def test_every_run_count_and_device_time_of_the_quickstart_is_its_figure():
    found = list(mentions())
    assert {what for _, what, _ in found} == {"runs", "device_s"}, "the pages no longer state the quickstart's size"
    allowed = {"runs": {FIGURES["runs"], FIGURES["measured_runs"]}, "device_s": {FIGURES["device_s"]}}
    wrong = [f"{where}: {number:g} {what}" for where, what, number in found if number not in allowed[what]]
    assert not wrong, ("the quickstart's size, said otherwise than docs/quickstart-figures.yaml:\n" + "\n".join(wrong))


def test_a_mention_is_read_in_its_sentence(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("The quickstart makes 75 runs, 3 runs of 5 s a point. Then 3 runs of fio.\n\nmake demo takes 430 s "
                    "of device time. With\nPRECISION it took 64 runs.\n\n# the quickstart: 1,204 fio runs\n")
    assert list(mentions([page], tmp_path)) == [("page.md:1", "runs", 75), ("page.md:3", "device_s", 430),
                                                ("page.md:6", "runs", 1204)]
