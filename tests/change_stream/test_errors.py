"""Clear errors: no table option, an unknown table, no read permission, vacuumed history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException, StreamingQueryException

from tests.change_stream.streams import batch, change_reader, create, run_to_memory
from versioned.api.catalog import Catalog, connect


def test_the_table_option_is_required(spark: Any, cat: Catalog) -> None:
    needs = r'needs the table: \.option\("table", "db\.table"\)'
    with pytest.raises(AnalysisException, match=needs):
        change_reader(spark, cat, "").load()


def test_an_unknown_table_is_named(spark: Any, cat: Catalog) -> None:
    with pytest.raises(AnalysisException, match=r"NoSuchTableError: no table cs\.nope"):
        change_reader(spark, cat, "cs.nope").load()


def test_reading_changes_needs_read_permission(spark: Any, cat: Catalog, tmp_path: Path) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    bob = connect(cat.settings.catalog_url, cat.settings.warehouse, spark, user="bob")
    try:
        denied = r"PermissionDeniedError: bob may not read cs\.t"
        with pytest.raises(AnalysisException, match=denied):
            change_reader(spark, bob, "cs.t").load()
        cat.grant("bob", "read", "cs.t")
        rows = run_to_memory(change_reader(spark, bob, "cs.t").load(), tmp_path / "ck")
        assert [(r["id"], r["_change_type"]) for r in rows] == [(1, "insert")]
    finally:
        bob.close()


def test_a_revoked_grant_stops_a_running_stream_s_next_batch(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    cat.grant("bob", "read", "cs.t")
    bob = connect(cat.settings.catalog_url, cat.settings.warehouse, spark, user="bob")
    try:
        checkpoint = tmp_path / "ck"
        frame = change_reader(spark, bob, "cs.t").load()
        assert len(run_to_memory(frame, checkpoint)) == 1
        cat.revoke("bob", "read", "cs.t")
        t.upsert(batch([("I", 2, "b", 2.0, "x")]))
        with pytest.raises(StreamingQueryException, match=r"bob may not read cs\.t"):
            run_to_memory(frame, checkpoint)
    finally:
        bob.close()


def test_changes_vacuum_deleted_fail_with_what_to_do(
    spark: Any, cat: Catalog, tmp_path: Path
) -> None:
    t = create(cat, "versioned")
    t.upsert(batch([("I", 1, "a", 1.0, "x")]))
    t.upsert(batch([("U", 1, "b", 1.0, "x")]))
    t.compact()
    t.vacuum(retain_hours=0, grace_hours=0)
    with pytest.raises(StreamingQueryException, match=r"cannot be read any more.*startingVersion"):
        run_to_memory(change_reader(spark, cat, "cs.t").load(), tmp_path / "ck")
    # From the compaction on, everything it needs is there.
    rows = run_to_memory(
        change_reader(spark, cat, "cs.t", startingVersion="latest").load(), tmp_path / "ck2"
    )
    assert rows == []
