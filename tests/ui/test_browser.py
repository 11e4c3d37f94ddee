"""The page in a real browser: Debian's chromium, headless, through Selenium. Pages load
without console errors and with their charts, show the numbers `history` and `partitions`
hold, and show a user without ``read`` neither the table nor its metadata.

``VERSIONED_UI_SCREENSHOTS=1`` also saves the README's screenshots (docs/images/). A machine
without chromium and chromedriver skips these tests, saying so, unless
``VERSIONED_REQUIRE_BROWSER=1`` (CI sets it, after installing them in .ci/run's setup stage):
then a missing browser fails the tests instead of skipping them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.browser import chromium, console_errors, missing_browser, serving
from tests.ui.showcase import SHOWN, build_showcase
from versioned.ui import formatting

_why = missing_browser()
if _why is not None and os.environ.get("VERSIONED_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"VERSIONED_REQUIRE_BROWSER=1 but {_why}")
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
SCREENSHOTS = os.environ.get("VERSIONED_UI_SCREENSHOTS") == "1"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The showcase catalog as its owner, demo."""
    from versioned.api.catalog import connect

    cat = connect(warehouse=str(tmp_path_factory.mktemp("shop") / "wh"), user="demo")
    build_showcase(cat)
    yield cat
    cat.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture(scope="module")
def url(shop: Any) -> Iterator[str]:
    with serving(shop) as address:
        yield address


def _cells(browser: Any, row_attr: str) -> dict[str, dict[str, str]]:
    """``{row's attribute: {data-col: text}}``, read from the rendered page (its DOM)."""
    from selenium.webdriver.common.by import By

    found = {}
    for row in browser.find_elements(By.CSS_SELECTOR, f"tr[{row_attr}]"):
        found[row.get_attribute(row_attr)] = {
            cell.get_attribute("data-col"): " ".join(
                (cell.get_attribute("textContent") or "").split()
            )
            for cell in row.find_elements(By.CSS_SELECTOR, "td[data-col]")
        }
    return found


def _charts_drawn(browser: Any) -> bool:
    return bool(
        browser.execute_script(
            "const imgs = Array.from(document.images);"
            "return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0);"
        )
    )


def test_pages_load_without_console_errors_and_draw_their_charts(
    browser: Any, url: str, shop: Any
) -> None:
    console_errors(browser)  # start clean
    for path in ("", f"table/{SHOWN}", "table/iot.readings", "table/crm.customers"):
        browser.get(url + path)
        assert browser.title.startswith("versioned"), path
        assert _charts_drawn(browser) or path == "", path
        assert console_errors(browser) == [], path


def test_the_numbers_on_the_pages_are_those_of_history_and_partitions(
    browser: Any, url: str, shop: Any
) -> None:
    table = shop.table(SHOWN)
    history = table.metadata("history").to_pylist()
    partitions = table.metadata("partitions").to_pylist()
    browser.get(url)
    row = _cells(browser, "data-table")[SHOWN]
    assert int(row["commits"].replace(",", "")) == len(history)
    assert int(row["live_rows"].replace(",", "")) == sum(
        p["live_rows_estimate"] for p in partitions
    )
    browser.get(url + f"table/{SHOWN}")
    commits = _cells(browser, "data-commit")
    assert sorted(int(c) for c in commits) == [h["commit"] for h in history]
    for h in history:
        shown = commits[str(h["commit"])]
        for col in ("inserted", "updated", "deleted", "rejected", "bytes_written"):
            assert shown[col] == formatting.count(h[col]), (h["commit"], col)
        assert shown["committed_at"] == formatting.local_time(h["committed_at"])
    parts = _cells(browser, "data-partition")
    assert set(parts) == {p["partition"] for p in partitions}
    for p in partitions:
        shown = parts[p["partition"]]
        assert shown["read_amplification"] == formatting.ratio(p["read_amplification"])
        assert shown["stored_rows"] == formatting.count(p["stored_rows"])
        assert shown["compaction_due"] == (p["compaction_due"] or "")
    assert any(p["compaction_due"] for p in partitions)  # the showcase has one to show


def test_a_user_without_read_sees_neither_the_table_nor_its_metadata(
    browser: Any, shop: Any
) -> None:
    from versioned.api.catalog import connect

    bob = connect(catalog=shop.settings.catalog_url, warehouse=shop.settings.warehouse, user="bob")
    try:
        with serving(bob) as bob_url:
            browser.get(bob_url)
            assert _cells(browser, "data-table") == {}
            assert SHOWN not in browser.page_source
            browser.get(bob_url + f"table/{SHOWN}")
            assert browser.find_element("id", "not-found").text.startswith("There is no table")
            assert "pos-east" not in browser.page_source  # no metadata of it
            browser.get(bob_url + f"table/{SHOWN}/commits.svg")
            assert "<svg" not in browser.page_source
            shop.grant("bob", "read", on="iot")  # the database's tables, not shop's
            browser.get(bob_url)
            assert set(_cells(browser, "data-table")) == {"iot.readings"}
            console_errors(browser)
    finally:
        shop.revoke("bob", "read", on="iot")
        bob.close()


@pytest.mark.skipif(not SCREENSHOTS, reason="VERSIONED_UI_SCREENSHOTS=1 saves the screenshots")
def test_save_the_readmes_screenshots(url: str, tmp_path: Path) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path / "overview", width=1280, height=560) as driver:
        driver.get(url)
        driver.save_screenshot(str(IMAGES / "ui-overview.png"))
    with chromium(tmp_path / "table", width=1280, height=1900) as driver:
        driver.get(url + f"table/{SHOWN}")
        assert _charts_drawn(driver)
        driver.save_screenshot(str(IMAGES / "ui-table.png"))
