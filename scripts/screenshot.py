"""A screenshot of a published report, for the README: ``make screenshot`` (after ``make demo``).

Opens the report in headless Chromium (Debian's ``chromium``, driven by Playwright) at a 1280 px wide viewport and
saves the top ``--height`` pixels as a PNG of few colours (Pillow's palette), small enough to commit.

    .venv/bin/python scripts/screenshot.py reports/quickstart/quickstart.html docs/quickstart-report.png
"""
from __future__ import annotations

import argparse
import io
import shutil
import sys
from pathlib import Path

WIDTH = 1280


def chromium() -> str:
    """Debian's chromium (Playwright cannot download its own browser here)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        sys.exit("chromium is not installed: make browser-deps (or sudo apt-get install chromium)")
    return found


def screenshot(report: Path, out: Path, height: int, start: str | None = None) -> int:
    """``height`` pixels of ``report`` at WIDTH px as a palette PNG at ``out`` (from the top, or from the heading
    that holds the text ``start``); its size in bytes."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium())
        page = browser.new_page(viewport={"width": WIDTH, "height": height})
        page.goto(report.resolve().as_uri(), wait_until="load")
        top = 0
        if start:
            heading = page.locator("h1, h2, h3", has_text=start).first
            if heading.count() == 0:
                sys.exit(f"{report} has no heading with {start!r}")
            top = heading.bounding_box()["y"]
        full = page.evaluate("document.documentElement.scrollHeight")
        png = page.screenshot(full_page=True, clip={"x": 0, "y": top, "width": WIDTH,
                                                     "height": min(height, full - top)})
        browser.close()
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, optimize=True)
    return out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--height", type=int, default=1400)
    parser.add_argument("--from", dest="start", help="start at the heading holding this text (default: the top)")
    args = parser.parse_args()
    if not args.report.is_file():
        sys.exit(f"{args.report} does not exist: make demo publishes it first")
    print(f"{args.out}: {screenshot(args.report, args.out, args.height, args.start) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
