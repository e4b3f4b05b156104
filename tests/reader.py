"""What a reader of a published report must never see, checked in headless Chromium (Debian's, through Playwright):
a JSON blob, a number in e-notation, a stderr or warning block, a page wider than the window, a figure without
its alt text or whose legend lies over its data (the figure says so in its PNG's metadata: ``drawing`` measures
it when the figure is drawn, ``LEGEND_KEY``). ``read_campaign`` opens a campaign's index and every report it
links, and returns what is wrong, report by report."""
from __future__ import annotations

import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from flashscale.publish.drawing import LEGEND_KEY  # a figure's PNG metadata: the legends over its data ([]: none)

WIDTH = 1280
NO_ALT = "No description has been provided for this image"  # nbconvert's stand-in for a missing alt
JSON_BLOB = re.compile(r'[{\[]\s*"[^"\n]{1,80}"\s*:')  # an object opened with a quoted key, as json.dumps writes
E_NOTATION = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")


@contextmanager
def chromium():
    """Headless Chromium, or the test skipped with what to install."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra: make test")
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("chromium is not installed: make browser-deps (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=found)
        try:
            yield browser
        finally:
            browser.close()


def text_problems(text: str) -> list[str]:
    """The JSON blobs and e-notation numbers in a page's visible text."""
    problems = [f"a JSON blob: {m.group(0)!r}" for m in JSON_BLOB.finditer(text)][:3]
    return problems + [f"a number in e-notation: {m.group(0)!r}" for m in E_NOTATION.finditer(text)][:3]


def legend_problems(executed: Path) -> list[str]:
    """The figures of an executed notebook whose legend lies over their data, or that did not say."""
    problems = []
    for index, cell in enumerate(nbformat.read(str(executed), as_version=4).cells):
        for output in cell.get("outputs", []):
            if "image/png" not in output.get("data", {}):
                continue
            said = output.get("metadata", {}).get("image/png", {})
            if LEGEND_KEY not in said:
                problems.append(f"cell {index}: a figure that does not say whether its legend is clear of its data")
            elif said[LEGEND_KEY]:
                problems.append(f"cell {index}: legend over the data: {said[LEGEND_KEY]}")
    return problems


def page_problems(page, url: str) -> list[str]:
    """What is wrong with the report at ``url`` as the page shows it."""
    response = page.goto(url, wait_until="load")
    if response is None or not response.ok:
        return [f"{url} does not load"]
    problems = text_problems(page.inner_text("body"))
    shown = page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.naturalWidth, i.alt])")
    problems += [f"an image that does not load ({alt[:60]!r})" for width, alt in shown if width == 0]
    problems += ["an image without alt text" for _, alt in shown if not alt.strip() or alt == NO_ALT]
    stderr = page.locator("[data-mime-type='application/vnd.jupyter.stderr']")
    problems += [f"a stderr block: {text[:120]!r}" for text in stderr.all_inner_texts()]
    overflow = page.evaluate("document.documentElement.scrollWidth") - WIDTH
    problems += [f"{overflow} px wider than the window"] if overflow > 4 else []
    return problems


def read_campaign(browser, index: Path) -> tuple[dict[str, list[str]], int]:
    """Every report ``index`` links, read as its reader would: (report name -> what is wrong, images seen)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    try:
        assert page.goto(index.as_uri()).ok
        found = {"index.html": text_problems(page.inner_text("body"))}
        links = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
        images = 0
        for link in links:
            name = link.rsplit("/", 1)[-1]
            found[name] = page_problems(page, link)
            images += page.locator("img").count()
            executed = index.parent / name.replace(".html", ".ipynb")
            found[name] += legend_problems(executed) if executed.exists() else [f"no executed notebook {executed}"]
        return {name: said for name, said in found.items() if said}, images
    finally:
        page.close()
