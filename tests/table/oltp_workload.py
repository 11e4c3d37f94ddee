"""Seeded random OLTP transactions on a PostgreSQL table, for tests/table/test_postgres_feed.py.

The table (`SOURCE_DDL`) has a BIGINT primary key, a partition column that is not part of it
(``region``: an update can move a row to another partition) and values of every type the
feed carries, hostile text included. A transaction runs one to six statements: inserts of
new keys (several per statement too), re-inserts of deleted keys, updates of values, of the
region and of the key itself, deletes, bulk updates, and several statements on one key; one
in seven rolls back. ``note`` is stored out of line without compression, so its long values
are TOASTed and updates that leave them alone do not carry them (``unchanged-toast-datum``).
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from decimal import Decimal
from typing import Any

import psycopg

SOURCE_DDL = """
CREATE TABLE source (
    id bigint PRIMARY KEY, region text, name text, qty integer, price numeric(12,2),
    born date, seen timestamp, active boolean, note text
);
ALTER TABLE source ALTER note SET STORAGE EXTERNAL
"""
COLUMNS = ("id", "region", "name", "qty", "price", "born", "seen", "active", "note")
VALUE_COLUMNS = COLUMNS[2:]
REGIONS = ["north", "south", "east west", "ünï", "O'Hare", None]
NAMES = [
    "it's", "O''Brien", 'say "hi"', "a  b  c", " lead", "trail ", "[x] y:z", "ünïcödé ✓",
    "emoji 🎉", "new\nline", "tab\tsep", "", "null", "unchanged-toast-datum", "back\\slash",
    "'", "old-key: id[bigint]:1 new-tuple:", "-12.50", None,
]  # fmt: skip
EDGE_DATES = [dt.date(1, 1, 1), dt.date(1582, 10, 4), dt.date(1899, 12, 31), dt.date(9999, 12, 31)]
EDGE_TIMES = [
    dt.datetime(1970, 1, 1),
    dt.datetime(1899, 12, 31, 23, 59, 59, 999999),
    dt.datetime(2024, 2, 29, 12, 0, 0, 1),
]
# Statement kinds and their weights.
STATEMENTS = {"insert": 3, "update": 3, "move": 2, "delete": 2, "reinsert": 1, "change key": 1,
              "same key": 1, "bulk update": 1}  # fmt: skip


class _Rollback(Exception):
    """Leaves a transaction block, rolling it back."""


class Workload:
    """Random transactions on ``source``; ``coverage`` counts what they did."""

    def __init__(self, conn: psycopg.Connection[Any], rng: random.Random) -> None:
        self.conn = conn
        self.rng = rng
        self.next_id = 1
        self.live: set[int] = set()
        self.gone: set[int] = set()
        self.coverage: Counter[str] = Counter()

    def round(self, transactions: int) -> None:
        for _ in range(transactions):
            self.transaction()

    def transaction(self) -> None:
        before = set(self.live)
        rollback = self.rng.random() < 1 / 7
        try:
            with self.conn.transaction():
                for _ in range(self.rng.randint(1, 6)):
                    self.statement()
                if rollback:
                    raise _Rollback
        except _Rollback:
            self.coverage["rolled back"] += 1
            self.gone |= self.live - before
            self.live = before
        self.gone -= self.live

    def statement(self) -> None:
        kind = self.rng.choices(list(STATEMENTS), weights=list(STATEMENTS.values()))[0]
        if kind != "insert" and len(self.live) < 5:
            kind = "insert"
        if kind == "reinsert" and not self.gone:
            kind = "insert"
        self.coverage[kind] += 1
        getattr(self, "_" + kind.replace(" ", "_"))()

    def _insert(self) -> None:
        ids = [self._new_id() for _ in range(self.rng.choice([1, 2, 3, 5]))]
        self._insert_rows(ids)

    def _reinsert(self) -> None:
        self._insert_rows([self.rng.choice(sorted(self.gone))])

    def _update(self, key: int | None = None) -> None:
        key = self._pick() if key is None else key
        columns = self.rng.sample(VALUE_COLUMNS, self.rng.randint(1, 3))
        sets = ", ".join(f"{c} = %s" for c in columns)
        params = [self.value(c) for c in columns]
        self.conn.execute(f"UPDATE source SET {sets} WHERE id = %s", (*params, key))

    def _move(self, key: int | None = None) -> None:
        key = self._pick() if key is None else key
        region = self.rng.choice(REGIONS)
        self.conn.execute(
            "UPDATE source SET region = %s WHERE id = %s AND region IS DISTINCT FROM %s",
            (region, key, region),
        )

    def _delete(self, key: int | None = None) -> None:
        key = self._pick() if key is None else key
        self.conn.execute("DELETE FROM source WHERE id = %s", (key,))
        self.live.discard(key)
        self.gone.add(key)

    def _change_key(self) -> None:
        old = self._pick()
        new = self.rng.choice(sorted(self.gone)) if self.gone else self._new_id()
        self.conn.execute("UPDATE source SET id = %s WHERE id = %s", (new, old))
        self.live.discard(old)
        self.gone.discard(new)
        self.gone.add(old)
        self.live.add(new)

    def _same_key(self) -> None:
        """Several statements on one key in one transaction, maybe ending deleted."""
        key = self._pick()
        self._update(key)
        self._move(key)
        self._update(key)
        if self.rng.random() < 0.5:
            self._delete(key)
            if self.rng.random() < 0.5:
                self._insert_rows([key])

    def _bulk_update(self) -> None:
        self.conn.execute(
            "UPDATE source SET qty = coalesce(qty, 0) / 2 + 1, seen = %s WHERE id %% 7 = %s",
            (self.value("seen"), self.rng.randrange(7)),
        )

    def _insert_rows(self, ids: list[int]) -> None:
        rows = [(i, self.rng.choice(REGIONS), *[self.value(c) for c in VALUE_COLUMNS]) for i in ids]
        marks = ", ".join("(" + ", ".join(["%s"] * len(COLUMNS)) + ")" for _ in rows)
        self.conn.execute(f"INSERT INTO source VALUES {marks}", [v for r in rows for v in r])
        self.live.update(ids)
        self.gone.difference_update(ids)

    def _pick(self) -> int:
        return self.rng.choice(sorted(self.live))

    def _new_id(self) -> int:
        key = self.next_id
        self.next_id += self.rng.choice([1, 1, 2, 1000])  # some far apart: wide key ranges
        return key

    def value(self, column: str) -> Any:
        """A random value of ``column``, null one time in eight (names have their own)."""
        rng = self.rng
        if column != "name" and rng.random() < 1 / 8:
            return None
        if column == "name":
            return rng.choice([*NAMES, f"n{rng.randrange(10**6)}"])
        if column == "qty":
            return rng.choice([-(2**31), 2**31 - 1, 0, rng.randint(-1000, 1000)])
        if column == "price":
            return Decimal(rng.randint(-(10**12) + 1, 10**12 - 1)).scaleb(-2)
        if column == "born":
            random_day = dt.date(1900, 1, 1) + dt.timedelta(days=rng.randrange(73000))
            return rng.choice([*EDGE_DATES, random_day, random_day])
        if column == "seen":
            micros = rng.randrange(4 * 10**15)  # 1970 .. 2096
            random_time = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
            return rng.choice([*EDGE_TIMES, random_time, random_time, random_time])
        if column == "active":
            return rng.choice([True, False])
        assert column == "note"
        if rng.random() < 0.25:  # TOASTed: out of line (> 2 kB, stored uncompressed)
            return "".join(rng.choice("abc ü'\"\n") for _ in range(3000))
        return rng.choice(NAMES)
