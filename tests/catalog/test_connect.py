"""Opening a catalog: schema creation, the schema-version check, bad URLs."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.catalog.conftest import ORDERS, orders_spec
from versioned.catalog import MetaStore
from versioned.catalog.engine import SCHEMA_VERSION
from versioned.errors import (
    CatalogError,
    CatalogSchemaVersionError,
    CatalogUnavailableError,
    ConfigError,
    TableAlreadyExistsError,
)


def _set_schema_version(url: str, version: int) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = :v"), {"v": version})
    finally:
        engine.dispose()


def test_connect_creates_the_schema_once_and_reopens_it(catalog_url: str) -> None:
    with MetaStore.connect(catalog_url, "alice") as first:
        first.create_table(orders_spec())
    with MetaStore.connect(catalog_url, "alice", create=False) as again:
        assert again.table(ORDERS).owner == "alice"
        assert again.user == "alice" and again.url == catalog_url


def test_opening_a_new_sqlite_catalog_waits_for_a_writer_holding_the_file(
    tmp_path: Path,
) -> None:
    """Switching a new SQLite file to WAL mode while another connection writes to it fails
    at once with "database is locked" (SQLite does not wait on this lock upgrade); several
    processes creating one catalog hit it. Connecting must wait for the writer instead."""
    path = tmp_path / "catalog.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other (i INTEGER)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other VALUES (1)")
    done = threading.Timer(0.5, lambda: writer.execute("COMMIT"))
    done.start()
    try:
        store = MetaStore.connect(f"sqlite:///{path}", "alice")
        store.close()
    finally:
        done.join()
        writer.close()
    with sa.create_engine(f"sqlite:///{path}").connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_a_catalog_from_a_newer_release_is_refused(catalog_url: str) -> None:
    MetaStore.connect(catalog_url, "alice").close()
    _set_schema_version(catalog_url, 999)
    with pytest.raises(CatalogSchemaVersionError, match="upgrade versioned") as raised:
        MetaStore.connect(catalog_url, "alice")
    assert (vars(raised.value)["found"], vars(raised.value)["supported"]) == (999, SCHEMA_VERSION)


def test_a_catalog_from_an_unknown_older_release_is_refused(catalog_url: str) -> None:
    MetaStore.connect(catalog_url, "alice").close()
    _set_schema_version(catalog_url, 0)
    with pytest.raises(CatalogSchemaVersionError):
        MetaStore.connect(catalog_url, "alice")


def test_connect_without_create_needs_an_existing_catalog(catalog_url: str) -> None:
    with pytest.raises(CatalogError, match="create=True"):
        MetaStore.connect(catalog_url, "alice", create=False)


@pytest.mark.parametrize(
    "url", ["not a url", "mysql://u@h/db", "sqlite://", "sqlite:///:memory:"], ids=repr
)
def test_unusable_urls_are_refused_with_advice(url: str) -> None:
    with pytest.raises(ConfigError, match="sqlite:///"):
        MetaStore.connect(url, "alice")


def test_an_unreachable_catalog_fails_with_a_catalog_error(tmp_path: object) -> None:
    with pytest.raises(CatalogError, match="cannot open the catalog"):
        MetaStore.connect("sqlite:////nonexistent-dir/sub/catalog.db", "alice")


def test_a_catalog_server_that_refuses_is_unavailable_after_the_outage_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As when it goes away midway: retryable, exit code 75, one line (psycopg's reason has
    two), after `VERSIONED_CATALOG_OUTAGE_S`."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("VERSIONED_CATALOG_OUTAGE_S", "0.5")
    started = time.monotonic()
    with pytest.raises(CatalogUnavailableError) as failed:
        MetaStore.connect(f"postgresql+psycopg://u@127.0.0.1:{port}/x", "alice")
    assert time.monotonic() - started >= 0.5
    message = str(failed.value)
    assert failed.value.retryable and failed.value.exit_code == 75
    assert "could not be reached" in message and "VERSIONED_CATALOG_OUTAGE_S" in message
    assert "\n" not in message


def test_creating_a_table_twice_fails(catalog_url: str) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        created = store.create_table(orders_spec())
        assert (created.location, created.owner, created.current_seq) == (
            "sales.db/orders",
            "alice",
            0,
        )
        assert created.spec == orders_spec()
        with pytest.raises(TableAlreadyExistsError, match="exists already"):
            store.create_table(orders_spec())
        assert [d.name for d in store.databases()] == ["sales"]


def test_table_properties_merge_and_persist(catalog_url: str) -> None:
    with MetaStore.connect(catalog_url, "alice") as store:
        store.create_table(orders_spec())
        store.set_table_properties(ORDERS, {"retention": "7d"})
        updated = store.set_table_properties(ORDERS, {"owner_team": "sales"})
        assert updated.spec.properties == {"retention": "7d", "owner_team": "sales"}
    with MetaStore.connect(catalog_url, "alice") as store:
        assert store.table(ORDERS).spec.properties == {"retention": "7d", "owner_team": "sales"}
