"""A published campaign read in a browser: headless Chromium (Debian's) through Playwright opens
reports/<campaign>/index.html, follows each link, and checks that every figure loads with its alt text, that no
stderr or warning block is published, and that nothing overflows a 1280 px wide window."""
from __future__ import annotations

import shutil

import pytest
import yaml

from flashscale import execute

pytestmark = pytest.mark.notebook
WIDTH = 1280
NO_ALT = "No description has been provided for this image"  # nbconvert's stand-in for a missing alt
SMALL = {"EMULATION": "directory", "LAYOUTS": ["single", "jbod"], "RW": ["read"], "NUMJOBS": [1, 2],
         "RUNTIME_S": 1, "RAMP_S": 0, "FILE_SIZE": 8388608, "PROGRESS": False}


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra: make test")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed: make browser-deps (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A small campaign with figures (the quickstart on plain directories) and the reference notebook."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: make system-deps")
    folder = tmp_path_factory.mktemp("browser")
    spec = {"campaign": "browsed", "description": "Two reports read in a browser.",
            "notebooks": ["quickstart", "reference_studies"],
            "notebook_parameters": {"quickstart": {**SMALL, "DATA_DIR": str(folder / "data")}}}
    (folder / "browsed.yaml").write_text(yaml.safe_dump(spec))
    execute.run_campaign(folder / "browsed.yaml", reports_dir=folder / "reports")
    return folder / "reports" / "browsed" / "index.html"


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth") - WIDTH


def test_the_index_and_every_report_it_links_read_well_in_a_browser(browser, published):
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    assert page.goto(published.as_uri()).ok
    assert "Measured at" in page.inner_text("body") and "plain directories" in page.inner_text("body")
    assert _overflow(page) <= 4
    links = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    assert len(links) == 2, links
    images = 0
    for link in links:
        response = page.goto(link, wait_until="load")
        assert response is not None and response.ok, link
        shown = page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.naturalWidth, i.alt])")
        assert all(width > 0 for width, _ in shown), (link, shown)
        assert all(alt.strip() and alt != NO_ALT for _, alt in shown), (link, shown)
        images += len(shown)
        stderr = page.locator("[data-mime-type='application/vnd.jupyter.stderr']")
        assert stderr.count() == 0, (link, stderr.all_inner_texts())
        assert _overflow(page) <= 4, (link, _overflow(page))
    assert images >= 3  # the quickstart's three figures
    page.close()
