"""How a SQLite catalog that cannot be written is opened: by the log when one exists,
unlocked (``immutable``) when none does, and how an unlocked read notices a writer.

These run as whoever runs the tests, on files they may write; what another user sees of a
read-only catalog is in tests/cli/test_cli_read_only_catalog.py.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from versioned.catalog import read_only_sqlite
from versioned.catalog.read_only_sqlite import CatalogChangedDuringRead


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A WAL-mode SQLite file with one row in ``t``, closed cleanly (so no -wal is left)."""
    path = tmp_path / "catalog.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (i INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    return path


@pytest.fixture
def holder(db: Path) -> Iterator[sqlite3.Connection]:
    """A writer's open connection: while it is open, commits stay in the -wal log."""
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("SELECT count(*) FROM t").fetchall()
        yield conn


def _insert(db: Path, value: int) -> None:
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("INSERT INTO t VALUES (?)", (value,))


def _rows(conn: sqlite3.Connection) -> list[int]:
    return [i for (i,) in conn.execute("SELECT i FROM t ORDER BY i")]


def test_a_file_this_process_may_write_is_not_refused(db: Path, tmp_path: Path) -> None:
    assert read_only_sqlite.write_refusal(db) is None
    assert read_only_sqlite.write_refusal(tmp_path / "missing.db") is None  # created later


def test_without_a_log_the_file_is_read_unlocked_and_a_later_writer_is_noticed(db: Path) -> None:
    assert not db.with_name("catalog.db-wal").exists()
    with closing(read_only_sqlite.connect(db, timeout_s=1)) as conn:
        assert conn.immutable_since is not None
        assert _rows(conn) == [1]
        read_only_sqlite.check_unchanged(conn)  # nobody wrote: the read stands
        _insert(db, 2)  # a writer opens, commits and closes
        with pytest.raises(CatalogChangedDuringRead, match="changed while it was read"):
            read_only_sqlite.check_unchanged(conn)
    with closing(read_only_sqlite.connect(db, timeout_s=1)) as again:
        assert _rows(again) == [1, 2]


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="open-file-description locks are Linux's"
)
def test_an_unlocked_read_keeps_a_writer_from_folding_its_log_into_the_file(db: Path) -> None:
    """The close of the last connection copies the log into the file and deletes it; while
    an unlocked read runs, its read lock must stop that, and only that."""
    content = db.read_bytes()
    log = db.with_name("catalog.db-wal")
    with closing(read_only_sqlite.connect(db, timeout_s=1)) as conn:
        _insert(db, 2)  # commits; its close cannot take the EXCLUSIVE lock to fold the log
        assert log.exists() and db.read_bytes() == content
        assert _rows(conn) == [1]  # what the file held when the read began
    _insert(db, 3)  # with the read over, a writer's close folds the log in again
    assert not log.exists() and db.read_bytes() != content


def test_a_writer_that_has_only_started_is_noticed_too(db: Path) -> None:
    with (
        closing(read_only_sqlite.connect(db, timeout_s=1)) as conn,
        closing(sqlite3.connect(db, isolation_level=None)) as writer,
    ):
        writer.execute("SELECT count(*) FROM t").fetchall()  # creates the log
        with pytest.raises(CatalogChangedDuringRead):
            read_only_sqlite.check_unchanged(conn)


def test_with_a_log_the_file_is_read_through_it_under_sqlites_locks(
    db: Path, holder: sqlite3.Connection
) -> None:
    _insert(db, 2)  # stays in the log: the holder keeps it from being folded in
    assert db.with_name("catalog.db-wal").exists()
    with closing(read_only_sqlite.connect(db, timeout_s=1)) as conn:
        assert conn.immutable_since is None
        assert _rows(conn) == [1, 2]
        holder.execute("INSERT INTO t VALUES (3)")
        read_only_sqlite.check_unchanged(conn)  # locked reads need no check
        assert _rows(conn) == [1, 2, 3]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO t VALUES (4)")
