"""The spec-path metric: followed from ``campaign.run`` to fio, which library files the campaign's spec passes
through, how often it moves back up to a higher layer, and how often it returns to a file it had left.

    .venv/bin/python scripts/spec_path.py                     every place it can run here (root: all three)
    .venv/bin/python scripts/spec_path.py --place directory   one place (loop, directory, testbed)
    .venv/bin/python scripts/spec_path.py --parts --json      the wider reading, as JSON

How it is measured: a profiler hook (``sys.setprofile``: every call and return) watches the frames of
``lib/flashscale`` while a tiny campaign runs (one layout, ``single``, one point of one second) at a place: the
emulated array (``loop``: root and loop devices), plain directories (``directory``), or a test bed of two loop
devices this script makes and detaches (``testbed``, confirmed, ``DRY_RUN=False``). A frame *holds the spec* when
one of its arguments or locals is a ``CampaignSpec`` (any: a ``replace``'d copy is the spec too), or ``self`` has
one as an attribute; with ``--parts`` also when it holds one of the spec's parts (its ``ArraySpec``, ``Sweep`` or
``layouts.Options``), methods called on them included. At every call and return the innermost frame that holds
the spec names the file the spec is in; the sequence of those files (a file repeated in a row counted once) is the
spec's path. It ends at the sweep's first fio run (the first ``fio`` command that is neither ``--version`` nor the
harness's probe of the caps, ``raw/harness``), where the campaign is stopped (its teardown runs as on Ctrl-C).

    files      distinct files on the path (with several places: on any of their paths)
    up         steps of the path to a higher layer than the step before (the layer order of the import-linter
               contracts in pyproject.toml, the inner layers of campaigns and notebooks too): a call back up
               (a callback), or the return from a lower layer to the file that called it
    returns    steps to a file the path had left earlier (not the one just before)

The issue's targets (issue 40): files <= 18, up <= 8.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
PACKAGE = LIB / "flashscale"
PLACES = ("loop", "directory", "testbed")
TINY = dict(LAYOUTS=["single"], DEVICES=2, RW=["write"], BS=[2**20], NUMJOBS=[1], IODEPTH=[1], REPETITIONS=1,
            RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20, WARMUP=False, DEVICE_SIZE=512 * 2**20,
            CAP_READ_BPS=50_000_000, CAP_WRITE_BPS=50_000_000, CAP_FIT="lower", PRECONDITION_PASSES=0)


class FioReached(BaseException):
    """Raised in the campaign when its sweep's first fio run starts: the path is complete."""


def layer_ranks() -> tuple[dict[str, int], list[dict[str, int]]]:
    """From pyproject.toml's layers contracts: the top-level layer of each package (0 the lowest) and, per inner
    contract, the rank of each module in it."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    ranks = []
    for contract in (c for c in contracts if c["type"] == "layers"):
        ranks.append({name.strip(): index for index, layer in enumerate(reversed(contract["layers"]))
                      for name in layer.split("|")})
    return ranks[0], ranks[1:]


def rank_of(name: str, top: dict[str, int], inner: list[dict[str, int]]) -> tuple[int, int]:
    """(top-level layer, inner layer or -1) of the module of file ``name`` (relative to lib/flashscale): the
    longest prefix of its module the contracts name."""
    parts = ["flashscale", *Path(name).with_suffix("").parts]
    parts = parts[:-1] if parts[-1] == "__init__" else parts

    def find(table: dict[str, int]) -> int | None:
        return next((table[".".join(parts[:end])] for end in range(len(parts), 0, -1)
                     if ".".join(parts[:end]) in table), None)

    outer = find(top)
    within = next((r for r in map(find, inner) if r is not None), -1)
    return (-1 if outer is None else outer, within)


def counts(path: list[str]) -> dict:
    top, inner = layer_ranks()
    ranks = [rank_of(name, top, inner) for name in path]
    up = sum(1 for before, after in zip(ranks, ranks[1:]) if after > before)
    returns = sum(1 for i, name in enumerate(path) if name in path[:max(0, i - 1)])
    return {"files": len(set(path)), "up": up, "returns": returns, "steps": len(path)}


def make_testbed(workdir: Path) -> tuple[dict, list[tuple[str, str]]]:
    """Two loop devices on sparse files of this script's, named by identity in a test bed file: the campaign's
    parameters, and (path, backing file) of each device to detach after."""
    made = []
    for index in range(2):
        backing = workdir / f"bed{index}.img"
        with open(backing, "xb") as fh:
            fh.truncate(512 * 2**20)
        path = subprocess.run(["losetup", "--find", "--show", str(backing)], check=True, capture_output=True,
                              text=True).stdout.strip()
        made.append((path, str(backing)))
    bed = workdir / "testbed.yaml"
    ids = [f"loop:{backing}" for _, backing in made]
    bed.write_text("name: specpath\ndevices:\n" + "".join(f'  - "{i}"\n' for i in ids))
    return {"TESTBED": str(bed), "CONFIRM": ids, "DRY_RUN": False}, made


def detach(made: list[tuple[str, str]]) -> None:
    """Detach the loop devices this script made, each only while it still shows our backing file."""
    for path, backing in made:
        shown = subprocess.run(["losetup", "--noheadings", "--output", "BACK-FILE", path], capture_output=True,
                               text=True).stdout.strip()
        if shown == backing:
            subprocess.run(["losetup", "--detach", path], check=False)


def trace(run, kinds: tuple[type, ...]) -> list[str]:
    """The files the spec passes through while ``run()`` runs, until the sweep's first fio run."""
    from flashscale.system import commands

    prefix = str(PACKAGE) + os.sep
    holders: list = []  # the frames that hold the spec, outermost first
    path: list[str] = []
    reached: list = []

    def holds(frame) -> bool:
        if any(isinstance(value, kinds) for value in frame.f_locals.values()):
            return True
        me = frame.f_locals.get("self")
        return me is not None and any(isinstance(v, kinds) for v in getattr(me, "__dict__", {}).values())

    def note(frame) -> None:
        name = os.path.relpath(frame.f_code.co_filename, PACKAGE)
        if not path or path[-1] != name:
            path.append(name)

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(prefix) and holds(frame):
            holders.append(frame)
            note(frame)
        elif event == "return" and holders and frame is holders[-1]:
            holders.pop()
            if holders:
                note(holders[-1])

    def stop_at_fio(argv) -> None:
        words = [str(a) for a in argv]
        if reached or not any(os.path.basename(w) == "fio" for w in words) or "--version" in words:
            return
        if any("raw/harness" in w for w in words):
            return
        reached.append(words)
        sys.setprofile(None)
        raise FioReached(" ".join(words))

    original = commands.Runner.run, commands.Runner.spawn

    def patched_run(self, argv, **kw):
        stop_at_fio(argv)
        return original[0](self, argv, **kw)

    def patched_spawn(self, argv, *a, **kw):
        stop_at_fio(argv)
        return original[1](self, argv, *a, **kw)

    commands.Runner.run, commands.Runner.spawn = patched_run, patched_spawn
    sys.setprofile(hook)
    try:
        run()
    except FioReached:
        pass
    finally:
        sys.setprofile(None)
        commands.Runner.run, commands.Runner.spawn = original
    if not reached:
        raise SystemExit("the campaign ended without running fio: no path measured")
    return path


def measure(place: str, parts: bool) -> list[str]:
    """The spec's path for a tiny campaign at ``place``."""
    from flashscale.campaigns import campaign

    with tempfile.TemporaryDirectory(prefix="flashscale-specpath-") as work:
        workdir, made = Path(work), []
        try:
            where = {"EMULATION": place, "BACKING_DIR": work} if place != "testbed" else {}
            if place == "testbed":
                where, made = make_testbed(workdir)
            spec = campaign.CampaignSpec.from_parameters(CAMPAIGN=f"specpath-{place}",
                                                         DATA_DIR=str(workdir / "data"), **TINY, **where)
            kinds = (type(spec), type(spec.array), type(spec.sweep), type(spec.options)) if parts else (type(spec),)
            return trace(lambda: campaign.run(spec, progress=False), kinds)
        finally:
            detach(made)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--place", choices=PLACES, action="append",
                        help="where the tiny campaign runs (repeatable; default: every place, loop and testbed "
                             "need root)")
    parser.add_argument("--parts", action="store_true",
                        help="the wider reading: a frame holding the spec's array, sweep or options holds it too")
    parser.add_argument("--json", action="store_true", help="print the counts and the paths as JSON")
    args = parser.parse_args()
    sys.path.insert(0, str(LIB))
    places = args.place or (PLACES if os.geteuid() == 0 else ("directory",))
    paths = {place: measure(place, args.parts) for place in places}
    found = {place: counts(path) for place, path in paths.items()}
    every = sorted({name for path in paths.values() for name in path})
    summary = {"files": len(every), "up": max(c["up"] for c in found.values()),
               "returns": max(c["returns"] for c in found.values())}
    if args.json:
        print(json.dumps({"places": {p: {**found[p], "path": paths[p]} for p in places}, "all": summary,
                          "files": every}, indent=1))
        return 0
    for place in places:
        c = found[place]
        print(f"{place}: {' -> '.join(paths[place])}")
        print(f"  files {c['files']}, moves up to a higher layer {c['up']}, returns to a file left earlier "
              f"{c['returns']} ({c['steps']} steps)")
    print(f"every place: {summary['files']} files ({', '.join(every)}); at most {summary['up']} moves up and "
          f"{summary['returns']} returns on one place's path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
