"""A published campaign read in a browser: headless Chromium (Debian's) through Playwright opens
reports/<campaign>/index.html, follows each link, and checks that every figure loads with its alt text, that no
stderr or warning block is published, that nothing overflows a 1280 px wide window, and that no JSON blob, no
number in e-notation and no legend over a figure's data reaches the reader (``reader``)."""
from __future__ import annotations

import shutil

import pytest
import yaml

import reader
from flashscale.notebooks import execute

pytestmark = pytest.mark.notebook
SMALL = {"EMULATION": "directory", "LAYOUTS": ["single", "jbod"], "RW": ["read"], "NUMJOBS": [1, 2],
         "RUNTIME_S": 1, "RAMP_S": 0, "FILE_SIZE": 8388608, "PROGRESS": False}


@pytest.fixture(scope="module")
def browser():
    with reader.chromium() as launched:
        yield launched


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


def test_the_index_and_every_report_it_links_read_well_in_a_browser(browser, published):
    page = browser.new_page(viewport={"width": reader.WIDTH, "height": 900})
    assert page.goto(published.as_uri()).ok
    assert "Measured at" in page.inner_text("body") and "plain directories" in page.inner_text("body")
    assert len(page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")) == 2
    page.close()
    problems, images = reader.read_campaign(browser, published)
    assert problems == {}
    assert images >= 3  # the quickstart's three figures


def test_the_reader_check_fails_on_what_a_reader_must_not_see(browser, tmp_path):
    """The check itself can fail: a JSON blob, an e-notation number, a stderr block and an image without alt."""
    page_file = tmp_path / "bad.html"
    page_file.write_text('<html><body><pre>{"baseline_bw_bytes": {"read": 2.011925e+08}}</pre>'
                         "<div data-mime-type='application/vnd.jupyter.stderr'>Traceback</div>"
                         '<img src="data:image/png;base64,iVBORw0KGgo="></body></html>')
    page = browser.new_page(viewport={"width": reader.WIDTH, "height": 900})
    problems = reader.page_problems(page, page_file.as_uri())
    page.close()
    assert any("JSON blob" in p for p in problems) and any("e-notation" in p for p in problems)
    assert any("stderr" in p for p in problems) and any("alt text" in p for p in problems)
    assert reader.text_problems("802 MB/s (798–806) on nvme1e2n1, fio-3.33, [1, 2] jobs") == []
