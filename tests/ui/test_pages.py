"""The page over a real catalog (no Spark, no browser): Starlette's test client against
tables streamed in both layouts; what it shows is what `Table.metadata` says, and only to
users who may read the table."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.ui.catalogs import DAYS, fill, hold_lock, make_table, stream
from tests.ui.html_cells import cells
from versioned.ui import formatting
from versioned.ui.app import create_app

starlette_testclient = pytest.importorskip("starlette.testclient")


def _client(cat: Any) -> Any:
    return starlette_testclient.TestClient(create_app(cat))


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_overview_lists_the_table_with_the_numbers_of_its_metadata(filled: Any) -> None:
    table = filled.table("d.ev")
    history = table.metadata("history").to_pylist()
    partitions = table.metadata("partitions").to_pylist()
    page = _client(filled).get("/")
    assert page.status_code == 200
    row = cells(page.text, "data-table")["d.ev"]
    assert row["layout"] == table.spec.layout
    assert _number(row["commits"]) == len(history)
    assert _number(row["live_rows"]) == sum(p["live_rows_estimate"] for p in partitions)
    assert _number(row["partitions"]) == len(partitions) == len(DAYS)
    assert row["last_commit"] == formatting.local_time(history[-1]["committed_at"])
    amps = [p["read_amplification"] for p in partitions if p["read_amplification"] is not None]
    assert row["worst_amplification"] == formatting.ratio(max(amps))


def test_table_page_shows_each_commit_as_history_has_it(filled: Any) -> None:
    history = filled.table("d.ev").metadata("history").to_pylist()
    page = _client(filled).get("/table/d.ev")
    assert page.status_code == 200
    shown = cells(page.text, "data-commit")
    assert sorted(int(k) for k in shown) == [h["commit"] for h in history]
    for h in history:
        row = shown[str(h["commit"])]
        assert _number(row["version"]) == h["version"]
        assert row["operation"].split()[0] == h["operation"]
        assert row["committed_at"] == formatting.local_time(h["committed_at"])
        for col in ("inserted", "updated", "deleted", "rejected", "bytes_written"):
            assert row[col] == formatting.count(h[col]), (h["commit"], col)
    totals = cells(page.text.replace("<tr><th>all", '<tr data-totals="1"><th>all'), "data-totals")
    for col in ("inserted", "updated", "deleted", "rejected"):
        assert _number(totals["1"][col]) == sum(h[col] or 0 for h in history)
    assert sum(h["rejected"] or 0 for h in history) > 0  # the page has dead letters to show


def test_table_page_shows_each_partition_as_partitions_has_it(filled: Any) -> None:
    partitions = filled.table("d.ev").metadata("partitions").to_pylist()
    shown = cells(_client(filled).get("/table/d.ev").text, "data-partition")
    assert set(shown) == {p["partition"] for p in partitions}
    for p in partitions:
        row = shown[p["partition"]]
        for col in ("versions", "data_files", "files", "stored_rows", "entries"):
            assert _number(row[col]) == p[col], (p["partition"], col)
        assert row["live_rows_estimate"] == formatting.count(p["live_rows_estimate"])
        assert row["read_amplification"] == formatting.ratio(p["read_amplification"])
        assert row["compaction_due"] == (p["compaction_due"] or "")


def test_table_page_shows_dead_letters_with_reasons_and_schema_history(filled: Any) -> None:
    letters = filled.table("d.ev").metadata("dead_letters").to_pylist()
    text = html.unescape(_client(filled).get("/table/d.ev").text)
    assert letters
    for letter in letters:
        assert letter["raw"] in text
        assert letter["reason"] and letter["reason"] in text
    assert "added note STRING" in text  # the alter commit, in the schema's history


def test_stream_writers_open_transactions_and_locks_are_shown(filled: Any) -> None:
    txn = hold_lock(filled, "d.ev", DAYS[0])
    try:
        page = _client(filled).get("/table/d.ev").text
        assert f'data-txn="{txn}"' in page
        assert "shared_write" in page
        assert f"day={DAYS[0]}" in page
        writers = cells(page, "data-writer")
        assert writers["cdc-job"]["batch_id"] == "7"
    finally:
        filled.engine_context.store.abort(txn)
    page = _client(filled).get("/table/d.ev").text
    assert f'data-txn="{txn}"' not in page
    assert 'id="no-locks"' in page


def test_a_user_without_read_sees_neither_the_table_nor_its_metadata(
    filled: Any, as_bob: Any
) -> None:
    bob = _client(as_bob)
    overview = bob.get("/")
    assert overview.status_code == 200
    assert "d.ev" not in overview.text
    assert 'id="no-tables"' in overview.text
    paths = ("/table/d.ev", "/table/d.ev/commits.svg", "/table/d.ev/partitions.svg")
    for path in paths:
        assert bob.get(path).status_code == 404, path
    # the same answer as for a table that does not exist: the page does not tell them apart
    hidden, missing = bob.get("/table/d.ev"), bob.get("/table/d.nope")
    assert hidden.text.replace("d.ev", "NAME") == missing.text.replace("d.nope", "NAME")
    assert "msg 0-0" not in hidden.text and "shared_write" not in hidden.text

    filled.grant("bob", "read", on="d.ev")
    assert "d.ev" in cells(bob.get("/").text, "data-table")
    for path in paths:
        assert bob.get(path).status_code == 200, path

    filled.revoke("bob", "read", on="d.ev")
    assert bob.get("/table/d.ev").status_code == 404  # taken back on the next request


def test_charts_are_svg_documents(filled: Any) -> None:
    client = _client(filled)
    for chart in ("commits", "partitions"):
        answer = client.get(f"/table/d.ev/{chart}.svg")
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "image/svg+xml"
        root = ET.fromstring(answer.content)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert len(list(root.iter())) > 50  # drawn, not an empty canvas


def test_the_heat_map_names_partitions_as_the_partitions_table_does(tmp_path: Path) -> None:
    """CJK values as text (not empty boxes), a null value by Hive's name (not ``None``), a
    long value cut with its whole name as a title; each as the table under the chart (and
    `versioned partitions`) names it."""
    from versioned.api.catalog import connect

    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    make_table(cat, "d.city", "versioned")
    long = "Taumatawhakatangihangakoauauotamateaturipukakapikimaungahoronukupokaiwhenuakitanatahu"
    for i, day in enumerate(["東京", "서울", None, long]):
        stream(cat, "d.city", day, [[f"{i},x"]], agent="a")
    client = _client(cat)
    shown = cells(client.get("/table/d.city").text, "data-partition")
    assert set(shown) == {
        "day=東京",
        "day=서울",
        "day=__HIVE_DEFAULT_PARTITION__",
        f"day={long}",
    }
    root = ET.fromstring(client.get("/table/d.city/partitions.svg").content)
    ns = "{http://www.w3.org/2000/svg}"
    texts = {t.text for t in root.iter(f"{ns}text")}
    assert {"東京", "서울", "__HIVE_DEFAULT_PARTITION__"} <= texts
    assert "None" not in texts and long not in texts
    (cut,) = [t for t in texts if t and t.endswith("…")]
    assert long.startswith(cut[:-1])
    assert [t.text for t in root.iter(f"{ns}title")] == [long]
    cat.close()


def test_a_new_commit_shows_on_the_next_request(filled: Any) -> None:
    client = _client(filled)
    before = cells(client.get("/table/d.ev").text, "data-commit")
    chart_before = client.get("/table/d.ev/commits.svg").content
    stream(filled, "d.ev", DAYS[1], [["5000,late", "y,bad"]], agent="late")
    after = cells(client.get("/table/d.ev").text, "data-commit")
    newest = filled.table("d.ev").metadata("history").to_pylist()[-1]
    assert str(newest["commit"]) in after and str(newest["commit"]) not in before
    assert client.get("/table/d.ev/commits.svg").content != chart_before


def test_the_overview_reads_the_summaries_the_commits_stored(filled: Any) -> None:
    from versioned.ui.metadata_cache import MetadataCache

    cache = MetadataCache()
    app = create_app(filled, cache=cache)
    app.state.warm_up()
    client = starlette_testclient.TestClient(app)
    assert "d.ev" in cells(client.get("/").text, "data-table")
    assert len(cache) == 0  # every partition was summarised by its last commit
    client.get("/table/d.ev")
    assert len(cache) > 0  # the table page reads its history, partitions, dead letters


def test_partitions_without_a_current_summary_are_computed(filled: Any) -> None:
    import sqlalchemy as sa

    from versioned.api.catalog_overview import catalog_overview
    from versioned.ui.metadata_cache import MetadataCache

    engine = sa.create_engine(filled.settings.catalog_url)
    with engine.begin() as conn:  # as a release before summaries left them
        conn.execute(sa.text("UPDATE partitions SET summary = NULL, summary_seq = NULL"))
    engine.dispose()
    assert [f.partitions for f in catalog_overview(filled)] == [None]
    cache = MetadataCache()
    app = create_app(filled, cache=cache)
    app.state.warm_up()
    assert len(cache) == 1  # d.ev's partitions, computed from its files
    test_overview_lists_the_table_with_the_numbers_of_its_metadata(filled)
    starlette_testclient.TestClient(app).get("/")
    assert len(cache) == 1  # the overview used them

    stream(filled, "d.ev", DAYS[0], [["7000,new"]], agent="late")
    assert [f.partitions for f in catalog_overview(filled)] == [None]  # DAYS[1] still has none
    stream(filled, "d.ev", DAYS[1], [["7001,new"]], agent="late")
    (facts,) = catalog_overview(filled)
    computed = filled.table("d.ev").metadata("partitions").to_pylist()
    assert facts.partitions == [
        {k: v for k, v in row.items() if k not in ("values", "last_compaction")} for row in computed
    ]


def test_a_table_without_commits_has_a_page_too(tmp_path: Path) -> None:
    from versioned.api.catalog import connect

    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    cat.create_table("d.empty", columns="id BIGINT", primary_key="id")
    client = _client(cat)
    page = client.get("/table/d.empty")
    assert page.status_code == 200
    assert not re.search(r"\b(None|nan)\b", page.text)
    assert "No partition yet." in page.text
    row = cells(client.get("/").text, "data-table")["d.empty"]
    assert (row["commits"], row["last_commit"], row["health"]) == ("0", "", "ok")
    for chart in ("commits", "partitions"):
        ET.fromstring(client.get(f"/table/d.empty/{chart}.svg").content)
    cat.close()


def test_the_page_only_reads(filled: Any) -> None:
    client = _client(filled)
    history = filled.table("d.ev").history()
    for method in ("post", "put", "delete", "patch"):
        for path in ("/", "/table/d.ev", "/table/d.ev/commits.svg"):
            assert getattr(client, method)(path).status_code == 405, (method, path)
    assert client.head("/table/d.ev").status_code == 200
    assert filled.table("d.ev").history() == history


def test_responses_forbid_scripts_and_outside_content(filled: Any) -> None:
    answer = _client(filled).get("/")
    policy = answer.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "<script" not in answer.text
    assert "http://" not in answer.text and "https://" not in answer.text
    css = _client(filled).get("/static/style.css")
    assert css.status_code == 200 and "url(" not in css.text


def test_needs_compaction_and_rising_dead_letters_are_marked(tmp_path: Path) -> None:
    from versioned.api.catalog import connect

    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    make_table(cat, "d.calm", "versioned")
    make_table(cat, "d.busy", "versioned")
    # calm: one clean commit; busy: clean commits, then rejects, past a low compaction bar
    stream(cat, "d.calm", DAYS[0], [["1,a"]], agent="c")
    clean = [[f"{i},ok"] for i in range(10)]
    bad = [[f"{100 + i},ok", f"x{i},bad"] for i in range(3)]
    stream(cat, "d.busy", DAYS[0], clean + bad, agent="b")
    cat.table("d.busy", need="write").set_properties({"auto_compact.min_small_files": "2"})
    rows = cells(_client(cat).get("/").text, "data-table")
    assert rows["d.calm"]["health"] == "ok"
    assert "needs compaction" in rows["d.busy"]["health"]
    assert "dead letters rising" in rows["d.busy"]["health"]
    due = cat.table("d.busy").metadata("partitions").to_pylist()[0]["compaction_due"]
    assert due and due in html.unescape(_client(cat).get("/table/d.busy").text)
    cat.close()


def test_times_are_iso_8601_in_the_servers_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    moment = datetime(2024, 1, 2, 3, 4, 5, 678, tzinfo=UTC)
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert formatting.local_time(moment) == "2024-01-02T08:34:05+05:30"
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("layout", ["versioned"])
def test_the_page_over_a_postgresql_catalog(pg_url: str, tmp_path: Path, layout: str) -> None:
    from versioned.api.catalog import connect

    cat = connect(catalog=pg_url, warehouse=str(tmp_path / "wh"), user="alice")
    make_table(cat, "d.ev", layout)
    fill(cat, "d.ev", commits=3)
    history = cat.table("d.ev").metadata("history").to_pylist()
    client = _client(cat)
    shown = cells(client.get("/table/d.ev").text, "data-commit")
    assert sorted(int(k) for k in shown) == [h["commit"] for h in history]
    assert _number(cells(client.get("/").text, "data-table")["d.ev"]["commits"]) == len(history)
    cat.close()
