"""PostgreSQL logical decoding for tests: a ``test_decoding`` slot's changes as change rows.

A slot created with ``pg_create_logical_replication_slot(name, 'test_decoding')`` streams the
committed transactions of its database as text, one line per change, in commit order::

    BEGIN
    table public.t: INSERT: id[bigint]:1 name[text]:'it''s' price[numeric]:-12.50 d[date]:null
    table public.t: UPDATE: old-key: id[bigint]:1 new-tuple: id[bigint]:2 name[text]:'x' ...
    table public.t: DELETE: id[bigint]:2
    COMMIT

(``include-xids`` off). Values are literals: numbers, ``true``/``false``, ``null``,
``unchanged-toast-datum`` (an unchanged TOASTed value an update does not carry), everything
else quoted with ``'`` doubled inside. An update names the old key only when the key changed
(or the table has ``REPLICA IDENTITY FULL``); a delete carries only the key columns under the
default replica identity.

`change_rows` turns the changes into the rows of a versioned change feed: the table's
columns, an op code (``I``, ``U``, ``D``) and an ordering value. A primary-key change becomes
a delete of the old key and an insert of the new one. The ordering value is the change's WAL
position (``LSN << 12``) plus its position among the rows of that WAL record (a ``COPY``
writes many rows in one record; a key change makes two rows), so it strictly increases
within a transaction, and per key in commit order: PostgreSQL's row locks let no transaction
change a row another one changed before that one committed. An ``unchanged-toast-datum`` is kept
as `UNCHANGED_TOAST`, or filled from the key's previous row when the caller keeps ``images``
(PostgreSQL leaves the value out even of an update that changes the key).

Test support only, not shipped: versioned reads Debezium feeds of PostgreSQL in production.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

import psycopg

INSERT, UPDATE, DELETE = "I", "U", "D"
# Rows sharing one WAL record get consecutive ordering values below the next record's.
POSITION_BITS = 12
_MAX_LSN = 1 << (63 - POSITION_BITS)


class UnchangedToast:
    """The value of a column an update left out because its TOASTed value did not change.

    A change feed in CSV or JSON Lines cannot say "keep the stored value" for one row and
    column (versioned's ``--partial`` is per file), so a consumer fills it from the key's
    previous image, or uses a Debezium feed (whose placeholder versioned understands).
    """

    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST = UnchangedToast()

Kind = Literal["INSERT", "UPDATE", "DELETE"]


@dataclass(frozen=True)
class Change:
    """One decoded change of one row.

    Attributes:
        lsn: WAL position of the change's record.
        table: The table as test_decoding names it, e.g. ``public.t``.
        kind: ``INSERT``, ``UPDATE`` or ``DELETE``.
        old: The old key (``UPDATE`` with ``old-key:``, ``DELETE``), else ``None``.
        new: The new row (``INSERT``, ``UPDATE``), else ``None``.
    """

    lsn: int
    table: str
    kind: Kind
    old: dict[str, Any] | None
    new: dict[str, Any] | None


def parse_lsn(text: str) -> int:
    """``'16/B374D848'`` as the 64-bit integer it stands for."""
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


_BEGIN = re.compile(r"BEGIN( \d+)?")
_COMMIT = re.compile(r"COMMIT( \d+)?( \(at .*\))?")
_KINDS: tuple[Kind, ...] = ("INSERT", "UPDATE", "DELETE")


def decode(lines: Iterable[tuple[str, str]]) -> list[Change]:
    """The changes of the committed transactions in ``(lsn, data)`` rows of a slot.

    Raises:
        ValueError: A line is not test_decoding's, a change lies outside a transaction, the
            stream ends inside one, or a transaction truncates a table (a truncate is no
            change of a key: replay it by emptying the table).
    """
    changes: list[Change] = []
    pending: list[Change] | None = None
    for lsn, data in lines:
        if _BEGIN.fullmatch(data):
            if pending is not None:
                raise ValueError(f"BEGIN inside a transaction at {lsn}")
            pending = []
        elif _COMMIT.fullmatch(data):
            if pending is None:
                raise ValueError(f"COMMIT outside a transaction at {lsn}")
            changes.extend(pending)
            pending = None
        elif data.startswith("message: "):
            continue  # pg_logical_emit_message: no row change
        elif pending is None:
            raise ValueError(f"change outside a transaction at {lsn}: {data[:80]!r}")
        else:
            pending.append(parse_change(data, parse_lsn(lsn)))
    if pending is not None:
        raise ValueError("the changes end inside a transaction")
    return changes


def parse_change(data: str, lsn: int) -> Change:
    """One ``table <name>: <KIND>: <columns>`` line.

    Raises:
        ValueError: The line is malformed, a truncate, or a change without tuple data.
    """
    if not data.startswith("table "):
        raise ValueError(f"not a test_decoding change: {data[:80]!r}")
    table, pos = _qualified_name(data, len("table "))
    kind_text, sep, _ = data[pos:].partition(": ")
    if kind_text == "TRUNCATE":
        raise ValueError(f"{table} was truncated: a truncate cannot be replayed as key changes")
    kind = next((k for k in _KINDS if k == kind_text), None)
    if kind is None or not sep:
        raise ValueError(f"unknown change {kind_text!r} of {table}")
    pos += len(kind_text) + 2
    if data[pos:] == "(no-tuple-data)":
        raise ValueError(f"{kind} of {table} without tuple data: the table needs a primary key")
    old: dict[str, Any] | None = None
    if kind == "UPDATE" and data.startswith("old-key: ", pos):
        old, pos = _columns(data, pos + len("old-key: "), stop="new-tuple: ")
        if not data.startswith("new-tuple: ", pos):
            raise ValueError(f"UPDATE of {table}: old-key without new-tuple: {data[:80]!r}")
        pos += len("new-tuple: ")
    values, pos = _columns(data, pos)
    if kind == "DELETE":
        return Change(lsn, table, kind, values, None)
    return Change(lsn, table, kind, old, values)


def _qualified_name(data: str, pos: int) -> tuple[str, int]:
    """``schema.table`` (each part bare or double-quoted) followed by ``": "``."""
    parts = []
    while True:
        part, pos = _identifier(data, pos, ".: ")
        parts.append(part)
        if data.startswith(".", pos):
            pos += 1
            continue
        if not data.startswith(": ", pos):
            raise ValueError(f"no table name in {data[:80]!r}")
        return ".".join(parts), pos + 2


def _identifier(data: str, pos: int, ends: str) -> tuple[str, int]:
    """A bare identifier up to one of ``ends``, or a quoted one with ``""`` for ``"``."""
    if data.startswith('"', pos):
        text, pos = _quoted(data, pos, '"')
        return text, pos
    end = pos
    while end < len(data) and data[end] not in ends:
        end += 1
    if end == pos or end == len(data):
        raise ValueError(f"expected a name at {pos} in {data[:80]!r}")
    return data[pos:end], end


def _quoted(data: str, pos: int, quote: str) -> tuple[str, int]:
    """The text between ``quote`` at ``pos`` and its closing one, doubled quotes undone."""
    pieces = []
    start = pos + 1
    while True:
        end = data.find(quote, start)
        if end == -1:
            raise ValueError(f"unterminated {quote} at {pos} in {data[:80]!r}")
        pieces.append(data[start:end])
        if data.startswith(quote, end + 1):
            pieces.append(quote)
            start = end + 2
            continue
        return "".join(pieces), end + 1


def _columns(data: str, pos: int, stop: str | None = None) -> tuple[dict[str, Any], int]:
    """``name[type]:value`` items separated by one space, up to the end or ``stop``."""
    values: dict[str, Any] = {}
    while pos < len(data) and not (stop and data.startswith(stop, pos)):
        name, pos = _identifier(data, pos, "[ ")
        if not data.startswith("[", pos):
            raise ValueError(f"column {name} has no type in {data[:80]!r}")
        type_end = data.find("]:", pos)
        if type_end == -1:
            raise ValueError(f"column {name} has no value in {data[:80]!r}")
        type_name = data[pos + 1 : type_end]
        pos = type_end + 2
        if data.startswith("'", pos):
            literal, pos = _quoted(data, pos, "'")
            values[name] = convert(type_name, literal)
        else:
            end = data.find(" ", pos)
            end = len(data) if end == -1 else end
            values[name] = _bare(type_name, data[pos:end])
            pos = end
        if pos < len(data):
            if data[pos] != " ":
                raise ValueError(f"expected a space after column {name} in {data[:80]!r}")
            pos += 1
    return values, pos


def _bare(type_name: str, token: str) -> Any:
    if token == "null":
        return None
    if token == "unchanged-toast-datum":
        return UNCHANGED_TOAST
    if type_name == "boolean":
        return {"true": True, "false": False}[token]
    return convert(type_name, token)


_INTEGERS = {"smallint", "integer", "bigint", "oid"}
_FLOATS = {"real", "double precision"}


def convert(type_name: str, text: str) -> Any:
    """The Python value of PostgreSQL's text output ``text`` of a ``type_name`` value.

    Integers become `int`, ``numeric`` `Decimal` (scale kept), floats `float`, ``date``
    `datetime.date`, ``timestamp`` a naive and ``timestamptz`` an aware `datetime.datetime`
    (DateStyle ISO), ``boolean`` `bool`; other types stay the text PostgreSQL printed.

    Raises:
        ValueError: A date or timestamp Python cannot hold (``infinity``, BC years).
    """
    if type_name in _INTEGERS:
        return int(text)
    if type_name == "numeric":
        return Decimal(text)
    if type_name in _FLOATS:
        return float(text)
    if type_name == "boolean":
        return {"t": True, "f": False, "true": True, "false": False}[text]
    if type_name in ("date", "timestamp without time zone", "timestamp with time zone"):
        if "infinity" in text or text.endswith(" BC"):
            raise ValueError(f"{type_name} {text!r} has no Python value")
        if type_name == "date":
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    return text


def change_rows(
    changes: Sequence[Change],
    key: Sequence[str],
    *,
    op_column: str = "op",
    ordering_column: str = "lsn",
    images: dict[tuple[Any, ...], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The rows of a change feed replaying ``changes``, in order.

    Each row holds the columns its change carried (a delete only the key, under the default
    replica identity), ``op_column`` (``I``/``U``/``D``) and ``ordering_column`` (see the
    module docstring). An update of the key is a delete of the old key and an insert.

    Args:
        images: The latest row of each key, kept across calls by the caller (start with
            ``{}`` when the slot was created before the table had rows). With it an
            `UNCHANGED_TOAST` value is filled from the key's previous row (the old key's
            when the update changed the key); without it the marker stays in the row.

    Raises:
        ValueError: An update names an old key without the ``key`` columns, an unchanged
            TOAST value belongs to a key ``images`` has not seen, or the WAL position or the
            rows of one record outgrow the ordering value.
    """
    rows: list[dict[str, Any]] = []
    last_lsn, position = -1, 0

    def emit(values: dict[str, Any], op: str, lsn: int) -> None:
        nonlocal last_lsn, position
        position = position + 1 if lsn == last_lsn else 0
        last_lsn = lsn
        if lsn >= _MAX_LSN or position >= 1 << POSITION_BITS:
            raise ValueError(f"LSN {lsn:X} row {position}: too large for a BIGINT ordering")
        rows.append({**values, op_column: op, ordering_column: (lsn << POSITION_BITS) + position})

    def keep(new: dict[str, Any], old_key: tuple[Any, ...] | None = None) -> dict[str, Any]:
        """``new`` with its unchanged TOAST values from the image of ``old_key`` (else of
        its own key); ``new`` becomes its key's image."""
        if images is None:
            return new
        new_key = tuple(new[c] for c in key)
        image = images.pop(new_key if old_key is None else old_key, None)
        if any(v is UNCHANGED_TOAST for v in new.values()):
            if image is None:
                raise ValueError(f"unchanged TOAST value of a key never seen whole: {new}")
            new = {c: image[c] if v is UNCHANGED_TOAST else v for c, v in new.items()}
        images[new_key] = new
        return new

    for change in changes:
        new, old = change.new or {}, change.old or {}
        if change.kind == "INSERT":
            emit(keep(new), INSERT, change.lsn)
        elif change.kind == "DELETE":
            if images is not None:
                images.pop(tuple(old.get(c) for c in key), None)
            emit(old, DELETE, change.lsn)
        elif change.old is not None and any(c not in old for c in key):
            raise ValueError(f"update of {change.table}: old key {old} lacks {list(key)}")
        elif change.old is not None and any(old[c] != new.get(c) for c in key):
            old_key = tuple(old[c] for c in key)
            emit(dict(zip(key, old_key, strict=True)), DELETE, change.lsn)
            emit(keep(new, old_key), INSERT, change.lsn)
        else:
            emit(keep(new), UPDATE, change.lsn)
    return rows


def connect(port: int, dbname: str) -> psycopg.Connection[Any]:
    """An autocommit connection to a database of the test cluster (`tests.support.postgres`)."""
    return psycopg.connect(
        host="127.0.0.1", port=port, user="postgres", dbname=dbname, autocommit=True
    )


def create_slot(conn: psycopg.Connection[Any], slot: str) -> None:
    """Create a logical replication slot with the test_decoding plugin."""
    conn.execute("SELECT pg_create_logical_replication_slot(%s, 'test_decoding')", (slot,))


def drop_slot(conn: psycopg.Connection[Any], slot: str) -> None:
    """Drop the slot (a slot keeps WAL and counts against ``max_replication_slots``)."""
    conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))


def read_changes(conn: psycopg.Connection[Any], slot: str, timeout_s: float = 30.0) -> list[Change]:
    """Consume every change committed before the call from ``slot``.

    Decoding reads only flushed WAL, and with ``synchronous_commit=off`` (the test cluster's)
    a commit is flushed by the WAL writer a moment later: wait for the flush first. The
    session's DateStyle and TimeZone decide how dates and times print: ISO and UTC here.

    Raises:
        TimeoutError: The WAL was not flushed within ``timeout_s``.
    """
    row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
    assert row is not None
    target = row[0]
    deadline = time.monotonic() + timeout_s
    flushed = "SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn"
    while not _one(conn, flushed, (target,)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"WAL up to {target} not flushed after {timeout_s} s")
        time.sleep(0.02)
    with conn.transaction():
        conn.execute("SET LOCAL DateStyle = 'ISO, MDY'")
        conn.execute("SET LOCAL TimeZone = 'UTC'")
        lines = conn.execute(
            "SELECT lsn::text, data FROM pg_logical_slot_get_changes(%s, NULL, NULL, "
            "'include-xids', '0', 'skip-empty-xacts', '1')",
            (slot,),
        ).fetchall()
    return decode(lines)


def _one(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...]) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]
