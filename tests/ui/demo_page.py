"""The page over the warehouse `make demo` leaves: what tests/test_demo.py checks after
playing the demo (it needs Spark; this part does not)."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from typing import Any

from tests.ui.html_cells import cells
from versioned.ui import formatting
from versioned.ui.app import create_app


def check_demo_page(cat: Any) -> None:
    """The overview lists test.sell with its commits; its page shows each commit as
    `history` has it, the demo's two dead letters with their reasons, and draws its charts."""
    from starlette.testclient import TestClient

    client = TestClient(create_app(cat))
    history = cat.table("test.sell").metadata("history").to_pylist()
    overview = cells(client.get("/").text, "data-table")
    assert overview["test.sell"]["commits"] == str(len(history))
    page = client.get("/table/test.sell")
    assert page.status_code == 200
    shown = cells(page.text, "data-commit")
    assert sorted(int(c) for c in shown) == [h["commit"] for h in history]
    for h in history:
        for col in ("inserted", "updated", "deleted", "rejected"):
            assert shown[str(h["commit"])][col] == formatting.count(h[col])
    text = html.unescape(page.text)
    assert "column sell_id: 'not-a-number' is not a BIGINT" in text
    assert "unknown op code 'X'" in text
    for chart in ("commits", "partitions"):
        answer = client.get(f"/table/test.sell/{chart}.svg")
        assert answer.status_code == 200
        ET.fromstring(answer.content)
