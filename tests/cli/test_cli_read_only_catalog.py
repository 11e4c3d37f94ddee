"""The CLI on a SQLite catalog its user cannot write (an analyst's read-only copy or mount).

Root builds each catalog through the CLI in this process; the commands under test run as
the ``postgres`` user in a child process (`tests.support.other_user`), through the CLI in
that process (`tests.support.cli_batch`), because root may write whatever the permission
bits say. Catalog file and directory belong to root, mode 0644 and 0755, as a read-only
mount or a colleague's directory would present them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from tests.support.other_user import USER, OtherUser, other_user
from versioned.catalog import MetaStore
from versioned.catalog.engine import SCHEMA_VERSION
from versioned.cli.main import cli
from versioned.names import TableName

Run = Callable[..., Result]
READS_WORK = "commands that only read work, writing needs a user who can write it"


@pytest.fixture
def other() -> OtherUser:
    """The user the commands run as, or a skip saying why there is none here."""
    found = other_user()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory of root's that the other user may read (pytest's tmp_path is private)."""
    path = Path(tempfile.mkdtemp(prefix="versioned-read-only-"))
    path.chmod(0o755)
    try:
        closed = [p for p in path.parents if not p.stat().st_mode & stat.S_IXOTH]
        if closed:
            pytest.skip(f"{closed[0]} is closed to other users: {USER} cannot reach a catalog")
        yield path
    finally:
        shutil.rmtree(path)


@pytest.fixture
def warehouse(shared: Path) -> Path:
    """The warehouse of the catalog under test, in `shared`."""
    return shared / "wh"


@pytest.fixture
def catalog(warehouse: Path) -> Path:
    """The SQLite catalog file of `warehouse`."""
    return warehouse / "catalog.db"


@pytest.fixture
def run(warehouse: Path) -> Run:
    """The CLI in this process, as root, on `warehouse`: each command must succeed."""
    return _as_root(warehouse)


def _cli(warehouse: Path, catalog: Path | None = None) -> list[str]:
    catalog = catalog or warehouse / "catalog.db"
    return ["--warehouse", str(warehouse), "--catalog", f"sqlite:///{catalog}", "--user", "alice"]


def _as_root(warehouse: Path) -> Run:
    def run(*args: str) -> Result:
        result = CliRunner().invoke(cli, [*_cli(warehouse), *args])
        assert result.exit_code == 0, result.output
        return result

    return run


def _as_other(
    other: OtherUser, warehouse: Path, *commands: list[str], catalog: Path | None = None
) -> list[dict[str, Any]]:
    """Run each command as the other user (one child process); their results."""
    batch = [[*_cli(warehouse, catalog), *args] for args in commands]
    child = other.run("-m", "tests.support.cli_batch", json.dumps(batch))
    assert child.returncode == 0, child.stderr
    results: list[dict[str, Any]] = json.loads(child.stdout)
    assert [r["exception"] for r in results] == [None] * len(commands), results
    return results


def _create(run: Run, name: str) -> None:
    run("create-table", name, "--columns", "id BIGINT, store STRING", "--primary-key", "id")


def _read_only(catalog: Path, *, file_mode: int = 0o644) -> dict[str, tuple[str, int]]:
    """Make the catalog root's (file ``file_mode``, directory 0755); return its files' state."""
    catalog.chmod(file_mode)
    catalog.parent.chmod(0o755)
    return _state(catalog)


def _state(catalog: Path) -> dict[str, tuple[str, int]]:
    """Content hash and modification time of the catalog file and its -wal and -shm files."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(catalog.parent.glob(catalog.name + "*"))
    }


def _commit_nothing(catalog: Path, name: str) -> int:
    """A data-less commit of ``name`` (the catalog's part of a write, without Spark)."""
    with MetaStore.connect(f"sqlite:///{catalog}", "alice") as store:
        txn = store.begin()
        store.commit(txn, TableName.parse(name), operation="upsert", partitions=[])
        return txn


def _table_names_in_the_file_alone(catalog: Path) -> list[str]:
    """Table names in the catalog file without its log (an unlocked, immutable read)."""
    with closing(sqlite3.connect(f"file:{catalog}?mode=ro&immutable=1", uri=True)) as conn:
        return sorted(name for (name,) in conn.execute("SELECT name FROM tables"))


def _csv_row(name: str) -> str:
    """A row of ``list-tables -o csv`` for a table made by `_create`."""
    return f"{name},versioned,parquet,alice,id,"


def test_read_commands_work_on_a_catalog_the_user_cannot_write(
    other: OtherUser, warehouse: Path, catalog: Path, run: Run
) -> None:
    _create(run, "test.sell")
    _create(run, "test.buy")
    run("grant", "read", "test.sell", "bob")
    version = _commit_nothing(catalog, "test.sell")
    before = _read_only(catalog)
    assert list(before) == ["catalog.db"]  # closed cleanly: no -wal, so read unlocked

    listed, described, history, grants = _as_other(
        other,
        warehouse,
        ["list-tables", "-o", "json"],
        ["describe", "test.sell", "-o", "json"],
        ["history", "test.sell", "-o", "json"],
        ["grants", "test.sell", "-o", "csv"],
    )

    assert [r["exit_code"] for r in (listed, described, history, grants)] == [0, 0, 0, 0]
    assert [t["table"] for t in json.loads(listed["stdout"])] == ["test.buy", "test.sell"]
    info = json.loads(described["stdout"])
    assert (info["owner"], info["current_version"], info["commits"]) == ("alice", version, 1)
    assert [c["version"] for c in json.loads(history["stdout"])] == [version]
    assert "bob,read,test.sell,alice" in grants["stdout"].splitlines()
    assert _state(catalog) == before  # nothing written, no -wal or -shm left behind


@pytest.mark.parametrize(
    ("file_mode", "reason"),
    [
        (0o644, f"the file is not writable by user {USER}"),
        (
            0o666,
            "its directory {dir} is not writable by user "
            f"{USER} (SQLite creates the catalog's -wal and -shm files there)",
        ),
    ],
    ids=["file", "directory"],
)
def test_write_commands_say_the_catalog_is_read_only_and_change_nothing(
    other: OtherUser,
    shared: Path,
    warehouse: Path,
    catalog: Path,
    run: Run,
    file_mode: int,
    reason: str,
) -> None:
    _create(run, "test.sell")
    feed = shared / "changes.csv"
    feed.write_text("id,store\n1,a\n")
    before = _read_only(catalog, file_mode=file_mode)

    results = _as_other(
        other,
        warehouse,
        ["create-table", "test.new", "--columns", "id BIGINT", "--primary-key", "id"],
        ["alter-table", "test.sell", "--add-columns", "note STRING"],
        ["upsert", "test.sell", str(feed)],
        ["compact", "test.sell"],
        ["grant", "read", "test.sell", "bob"],
        ["drop-table", "test.sell"],  # refused before it asks for confirmation
    )

    line = (
        f"Error: the catalog {catalog} is read-only: {reason.format(dir=warehouse)}; {READS_WORK}\n"
    )
    assert [(r["exit_code"], r["stderr"], r["stdout"]) for r in results] == [(2, line, "")] * 6
    assert _state(catalog) == before


def test_a_writer_holding_the_log_open_is_read_through_it_and_keeps_writing(
    other: OtherUser, warehouse: Path, catalog: Path, run: Run
) -> None:
    _create(run, "test.sell")
    holder = sqlite3.connect(catalog)  # a writer's open connection: the log stays unfolded
    try:
        holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
        _create(run, "test.late")
        assert _table_names_in_the_file_alone(catalog) == ["sell"]  # late is in the log only
        _read_only(catalog)

        (listed,) = _as_other(other, warehouse, ["list-tables", "-o", "json"])

        assert listed["exit_code"] == 0, listed["stderr"]
        assert [t["table"] for t in json.loads(listed["stdout"])] == ["test.late", "test.sell"]
        _create(run, "test.after")  # the reader left the writer's -shm index usable
    finally:
        holder.close()
    assert sorted(p.name for p in warehouse.glob("catalog.db*")) == ["catalog.db"]


def test_a_write_sqlite_refuses_although_the_files_looked_writable_says_read_only(
    other: OtherUser, warehouse: Path, catalog: Path, run: Run
) -> None:
    """File and directory are writable by all, but a writer holds the catalog open and its
    -wal and -shm files are not: the catalog opens for writing, and SQLite's refusal is
    the same one line."""
    _create(run, "test.sell")
    holder = sqlite3.connect(catalog)
    try:
        holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
        warehouse.chmod(0o777)
        catalog.chmod(0o666)
        for name in ("catalog.db-wal", "catalog.db-shm"):
            (warehouse / name).chmod(0o644)

        listed, created = _as_other(
            other,
            warehouse,
            ["list-tables", "-o", "csv"],
            ["create-table", "test.new", "--columns", "id BIGINT", "--primary-key", "id"],
        )
    finally:
        holder.close()

    assert (listed["exit_code"], listed["stdout"].splitlines()[1:]) == (0, [_csv_row("test.sell")])
    assert (created["exit_code"], created["stderr"]) == (
        2,
        f"Error: the catalog {catalog} is read-only: SQLite says: attempt to write a readonly "
        f"database; {READS_WORK}\n",
    )
    assert [t["table"] for t in json.loads(run("list-tables", "-o", "json").stdout)] == [
        "test.sell"
    ]


def test_a_log_without_its_index_fails_in_one_line_saying_who_can_fix_it(
    other: OtherUser, shared: Path, warehouse: Path, run: Run
) -> None:
    _create(run, "test.sell")
    holder = sqlite3.connect(warehouse / "catalog.db")
    try:
        holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
        _create(run, "test.late")
        copy = shared / "copy"
        copy.mkdir()
        for name in ("catalog.db", "catalog.db-wal"):  # as a copy that forgot the -shm
            shutil.copy(warehouse / name, copy / name)
    finally:
        holder.close()
    (copy / "catalog.db-wal").chmod(0o644)
    before = _read_only(copy / "catalog.db")

    (listed,) = _as_other(other, warehouse, ["list-tables"], catalog=copy / "catalog.db")

    assert listed["exit_code"] == 1
    assert len(listed["stderr"].splitlines()) == 1
    assert "its -wal log has no -shm index beside it" in listed["stderr"]
    assert "someone who can write the catalog must open it once" in listed["stderr"]
    assert _state(copy / "catalog.db") == before


def test_an_older_read_only_catalog_asks_for_an_upgrade_by_someone_who_can_write_it(
    other: OtherUser, warehouse: Path, catalog: Path
) -> None:
    _create(_as_root(warehouse), "test.sell")
    engine = sa.create_engine(f"sqlite:///{catalog}")
    try:
        with engine.begin() as conn:  # as release 3 left it (see tests/catalog)
            conn.execute(sa.text("DROP TABLE stream_progress"))
            conn.execute(sa.text("DELETE FROM catalog_meta WHERE id = 4"))
            conn.execute(sa.text("UPDATE catalog_meta SET schema_version = 3"))
    finally:
        engine.dispose()
    before = _read_only(catalog)

    (listed,) = _as_other(other, warehouse, ["list-tables"])

    assert listed["exit_code"] == 1
    assert listed["stderr"] == (
        f"Error: the catalog at sqlite:///{catalog} has schema version 3, older than the "
        f"{SCHEMA_VERSION} this release reads, and is read-only: the file is not writable by "
        f"user {USER}; someone who can write it must upgrade it, by opening it once with this "
        "release (e.g. versioned list-tables)\n"
    )
    assert _state(catalog) == before  # no upgrade was tried


def test_a_writer_starting_during_an_unlocked_read_makes_the_read_run_again(
    other: OtherUser, warehouse: Path, catalog: Path, run: Run
) -> None:
    _create(run, "test.sell")
    _read_only(catalog)
    assert not (warehouse / "catalog.db-wal").exists()  # so the reader opens it immutable

    reader = other.start("-m", "tests.support.paused_reader", f"sqlite:///{catalog}", "alice")
    try:
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline() == "paused\n", reader.stderr and reader.stderr.read()
        _create(run, "test.during")  # a writer opens the catalog, commits, closes
        reader.stdin.write("go\n")
        reader.stdin.flush()
        out, err = reader.communicate(timeout=30)
    finally:
        reader.kill()
        reader.wait()

    assert reader.returncode == 0, err
    assert json.loads(out) == {"tables": ["test.during", "test.sell"], "commits": 2}
