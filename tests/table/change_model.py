"""A plain-Python model of a versioned table and a seeded generator of hostile change feeds.

The model is the oracle of `test_differential`: a dict of live rows per key, plus (for tables
with an ordering column) the stored ordering value of every key, tombstones included. A key
is the primary key when it is unique table-wide (the partition column is not part of it: a
change naming another partition moves the row), else the partition value and the key. It
states the semantics in the fewest lines we could manage, so a disagreement with the engine
is easy to judge.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Key = tuple[Any, ...]
Row = tuple[Any, ...]

INSERT, UPDATE, DELETE = "I", "U", "D"
SPELLINGS = {
    INSERT: ["I", "i", "insert", "INSERT", " Insert "],
    UPDATE: ["U", "u", "update", "UPDATE", "upsert", "Upsert "],
    DELETE: ["D", "d", "delete", "DELETE", " Delete"],
}
NAMES = ["alpha", "Bäcker", 'say "hi", ok', "x,y", "日本", "o'neil", "tab\there", "sp ace"]


@dataclass(frozen=True)
class Change:
    """One input record: its canonical op, how the feed spells it, and the table's values."""

    op: str
    spelled: str
    values: Mapping[str, Any]

    def get(self, column: str) -> Any:
        return self.values.get(column)


@dataclass(frozen=True)
class Shape:
    """The table under test, as the model needs it."""

    columns: tuple[str, ...]
    primary_key: tuple[str, ...]
    partition: str
    ordering: str | None

    @property
    def table_wide(self) -> bool:
        return self.partition not in self.primary_key

    @property
    def key_columns(self) -> tuple[str, ...]:
        """What identifies a record in the model."""
        return self.primary_key if self.table_wide else self.change_key_columns

    @property
    def change_key_columns(self) -> tuple[str, ...]:
        """How the generator addresses a record: the partition, then the primary key."""
        return (self.partition, *[c for c in self.primary_key if c != self.partition])


@dataclass
class Expected:
    """What the model says one batch does (the exact part of a CommitResult)."""

    upserts: int = 0
    deletes: int = 0
    true_updates: int = 0
    true_deletes: int = 0
    stale: int = 0
    superseded: int = 0
    rejected: int = 0
    partitions: int = 0
    partitions_max: int = 0


def partition_value(value: Any) -> Any:
    """Hive keeps ``""`` and null in one partition (``__HIVE_DEFAULT_PARTITION__``): null."""
    return None if value == "" else value


@dataclass
class TableModel:
    """The state of a table after each version: live rows per key, tombstones, coverage."""

    shape: Shape
    live: dict[Key, Row] = field(default_factory=dict)
    stored_order: dict[Key, Any] = field(default_factory=dict)
    ever_deleted: set[Key] = field(default_factory=set)
    versions: dict[int, dict[Key, Row]] = field(default_factory=dict)
    coverage: Counter[str] = field(default_factory=Counter)
    moved: set[Key] = field(default_factory=set)  # live keys whose last upsert moved them
    deleted_from: dict[Key, Any] = field(default_factory=dict)

    def key(self, change: Change) -> Key:
        return self.key_of(tuple(change.get(c) for c in self.shape.change_key_columns))

    def key_of(self, change_key: Key) -> Key:
        """The model's key of a generator key ``(partition, *primary key)``."""
        values = dict(zip(self.shape.change_key_columns, change_key, strict=True))
        values[self.shape.partition] = partition_value(values[self.shape.partition])
        return tuple(values[c] for c in self.shape.key_columns)

    def partition_of(self, row: Row) -> Any:
        return row[self.shape.columns.index(self.shape.partition)]

    def row(self, change: Change) -> Row:
        part = self.shape.partition
        return tuple(
            partition_value(change.get(c)) if c == part else change.get(c)
            for c in self.shape.columns
        )

    def apply(self, version: int, changes: Sequence[Change]) -> Expected:
        """Apply one batch as ``version`` and return what it should count."""
        ordering = self.shape.ordering
        by_key: dict[Key, list[tuple[int, Change]]] = {}
        for i, change in enumerate(changes):
            by_key.setdefault(self.key(change), []).append((i, change))
        expected = Expected(superseded=len(changes) - len(by_key))
        touched: set[Any] = set()  # partitions the version certainly writes to
        named: set[Any] = set()  # partitions the batch's kept changes name
        for key, candidates in by_key.items():
            if ordering is None:
                index, winner = candidates[-1]
            else:
                index, winner = max(candidates, key=lambda c: (c[1].get(ordering), c[0]))
                self._note_ordering(candidates, index, winner)
            self._note_batch_shape(key, candidates, winner)
            part = partition_value(winner.get(self.shape.partition))
            named.add(part)
            if ordering is not None and key in self.stored_order:
                if winner.get(ordering) < self.stored_order[key]:
                    expected.stale += 1
                    self._note_stale(key, winner)
                    continue
                if winner.get(ordering) == self.stored_order[key]:
                    self.coverage["equal ordering value applies"] += 1
            old = self.live.get(key)
            if old is not None:
                touched.add(self.partition_of(old))
            if winner.op == DELETE:
                expected.deletes += 1
                if ordering is not None:
                    touched.add(part)  # the tombstone
                if old is not None:
                    expected.true_deletes += 1
                    del self.live[key]
                    self.ever_deleted.add(key)
                    self._note_delete(key, old, part)
                else:
                    self.coverage["delete of a missing key"] += 1
            else:
                expected.upserts += 1
                touched.add(part)
                self._note_upsert(key, old, part, winner)
                self.live[key] = self.row(winner)
            if ordering is not None:
                self.stored_order[key] = winner.get(ordering)
        expected.partitions = len(touched)
        # Bloom false positives add partitions: any named one, and with a table-wide key any
        # partition that ever held a row.
        known = named | touched
        if self.shape.table_wide:
            known |= {self.partition_of(r) for v in self.versions.values() for r in v.values()}
        expected.partitions_max = len(known)
        self.versions[version] = dict(self.live)
        return expected

    def _note_upsert(self, key: Key, old: Row | None, part: Any, winner: Change) -> None:
        if old is not None:
            if self.partition_of(old) != part:
                self.coverage["key moved to another partition"] += 1
        elif key in self.ever_deleted:
            self.coverage["re-insert of a key deleted by an earlier version"] += 1
            if self.shape.table_wide and self.deleted_from.get(key) != part:
                self.coverage["delete then re-insert in another partition"] += 1
        elif winner.op == UPDATE:
            self.coverage["update of a missing key"] += 1
        self.moved.discard(key)
        if old is not None and self.partition_of(old) != part:
            self.moved.add(key)

    def _note_delete(self, key: Key, old: Row, part: Any) -> None:
        self.deleted_from[key] = self.partition_of(old)
        if key in self.moved:
            self.coverage["delete of a key that moved"] += 1
        if self.partition_of(old) != part:
            self.coverage["delete naming another partition than the row's"] += 1

    def _note_batch_shape(self, key: Key, changes: list[tuple[int, Change]], won: Change) -> None:
        ops = [c.op for _, c in changes]
        if len(ops) > 1:
            self.coverage["duplicate key in a batch"] += 1
        after_delete = ops[ops.index(DELETE) + 1 :] if DELETE in ops else []
        if won.op != DELETE and any(op != DELETE for op in after_delete):
            self.coverage["delete then re-insert in a batch"] += 1
        parts = {partition_value(c.get(self.shape.partition)) for _, c in changes}
        if len(parts) > 1:
            self.coverage["key in two partitions in one batch"] += 1
        if partition_value(won.get(self.shape.partition)) is None:
            self.coverage["null partition"] += 1

    def _note_ordering(self, changes: list[tuple[int, Change]], index: int, won: Change) -> None:
        ordering = self.shape.ordering
        assert ordering is not None
        if index != changes[-1][0]:
            self.coverage["ordering value beats input order"] += 1
        if sum(c.get(ordering) == won.get(ordering) for _, c in changes) > 1:
            self.coverage["tie broken by input order"] += 1

    def _note_stale(self, key: Key, winner: Change) -> None:
        self.coverage["stale change"] += 1
        if winner.op == DELETE and key in self.live:
            self.coverage["late delete leaves the newer row"] += 1
        if winner.op != DELETE and key not in self.live:
            if key in self.ever_deleted:
                self.coverage["late insert does not resurrect a deleted key"] += 1
            else:
                self.coverage["insert older than an earlier delete stays deleted"] += 1


def net_diff(before: Mapping[Key, Row], after: Mapping[Key, Row]) -> Counter[tuple[Any, ...]]:
    """``(change, *row)`` per key that differs: the new row, or a delete's last row."""
    diff: Counter[tuple[Any, ...]] = Counter()
    for key in before.keys() | after.keys():
        if key not in before:
            diff[("insert", *after[key])] += 1
        elif key not in after:
            diff[("delete", *before[key])] += 1
        elif before[key] != after[key]:
            diff[("update", *after[key])] += 1
    return diff


class FeedGenerator:
    """Seeded change batches that visit every awkward case the engine must get right.

    Each batch mixes random changes with forced scenarios: duplicate keys, delete then
    re-insert, re-inserts of keys deleted earlier, updates and deletes of missing keys, and
    (with an ordering column) late events, ties and deletes that precede any insert.

    Ids drift upwards from batch to batch (like the ids of new orders) and some batches keep
    to a narrow band, so versions may be pruned by key range; forced scenarios reach back to
    older keys.
    """

    def __init__(self, model: TableModel, seed: int, *, key_space: Sequence[Any]) -> None:
        self.model = model
        self.shape = model.shape
        self.rng = random.Random(seed)
        self.key_space = list(key_space)  # values of the primary key's second column, if any
        self.width = 60 if not key_space else 15
        self.partitions: list[Any] = []
        self.batches = 0
        self.clock = 1_000
        self.early_deletes: list[Key] = []
        self.window = range(self.width)
        self.issued: set[Key] = set()

    def batch(self, new_partitions: Iterable[Any], rows: int) -> list[Change]:
        """One batch of about ``rows`` changes; ``new_partitions`` first appear in it."""
        rng = self.rng
        new = list(new_partitions)
        self.partitions += new
        base = self.batches * self.width // 4
        self.batches += 1
        narrow = rng.randrange(base, base + self.width)
        self.window = rng.choice(
            [range(base, base + self.width), range(narrow, narrow + self.width // 6)]
        )
        self.issued = set()
        groups: list[list[Change]] = []
        for _ in range(rows):
            part = rng.choice(new) if new and rng.random() < 0.3 else rng.choice(self.partitions)
            op = rng.choices([INSERT, UPDATE, DELETE], weights=[4, 4, 2])[0]
            groups.append([self._change(op, self._pk(part), late=rng.random() < 0.15)])
        for _ in range(8):
            pk = self._pk(rng.choice(self.partitions))
            ops = rng.choices([INSERT, UPDATE, DELETE], k=rng.randint(2, 4))
            groups.append([self._change(op, pk) for op in ops])
        for _ in range(3):
            pk = self._existing() or self._pk(rng.choice(self.partitions))
            groups.append([self._change(DELETE, pk), self._change(INSERT, pk)])
            pk = self._existing() or self._pk(rng.choice(self.partitions))
            groups.append([self._change(INSERT, pk), self._change(DELETE, pk)])
        deleted = sorted(self.model.ever_deleted - self.model.live.keys(), key=repr)
        for key in rng.sample(deleted, min(3, len(deleted))):
            groups.append([self._change(rng.choice([INSERT, UPDATE]), self._ck(key))])
        if self.shape.table_wide:
            groups += self._move_scenarios()
        for _ in range(3):
            groups.append([self._change(UPDATE, self._missing_pk())])
            groups.append([self._change(DELETE, self._missing_pk())])
        if self.shape.ordering is not None:
            groups += self._ordering_scenarios()
        rng.shuffle(groups)
        return [change for group in groups for change in group]

    def _move_scenarios(self) -> list[list[Change]]:
        """Keys that change partition within a batch, and deletes of keys that moved."""
        rng, model = self.rng, self.model
        groups: list[list[Change]] = []
        live = sorted(model.live, key=repr)
        for key in rng.sample(live, min(2, len(live))):
            first, second = rng.sample(self.partitions, 2)
            groups.append(
                [self._change(UPDATE, (first, *key)), self._change(UPDATE, (second, *key))]
            )
        moved = sorted(model.moved & model.live.keys(), key=repr)
        for key in rng.sample(moved, min(2, len(moved))):
            groups.append([self._change(DELETE, self._ck(key))])
        return groups

    def _ordering_scenarios(self) -> list[list[Change]]:
        rng, model = self.rng, self.model
        groups: list[list[Change]] = []
        tombstones = sorted(model.stored_order.keys() - model.live.keys(), key=repr)
        for key in rng.sample(tombstones, min(3, len(tombstones))):  # late, older inserts
            older = model.stored_order[key] - rng.randint(1, 5)
            groups.append([self._change(INSERT, self._ck(key), order=older)])
        live = sorted(model.live, key=repr)
        for key in rng.sample(live, min(2, len(live))):  # same ordering value as stored
            order = model.stored_order[key]
            groups.append([self._change(UPDATE, self._ck(key), order=order)])
        for key in rng.sample(live, min(2, len(live))):  # a late delete
            order = model.stored_order[key] - 1
            groups.append([self._change(DELETE, self._ck(key), order=order)])
        for key in self.early_deletes:  # the insert comes after a delete with a newer value
            if model.key_of(key) not in model.stored_order:
                continue  # the test dropped the delete (a CSV batch cannot say "")
            order = model.stored_order[model.key_of(key)] + rng.choice([-3, 3])
            groups.append([self._change(INSERT, self._ck(model.key_of(key)), order=order)])
        self.early_deletes = []
        for _ in range(2):
            key = self._missing_pk()
            self.early_deletes.append(key)
            groups.append([self._change(DELETE, key, order=self.clock + 50)])
        for _ in range(2):  # input order disagrees with ordering values; then a tie
            c = self.clock
            pk = self._pk(rng.choice(self.partitions))
            groups.append(
                [self._change(INSERT, pk, order=c + 2), self._change(DELETE, pk, order=c + 1)]
            )
            pk = self._pk(rng.choice(self.partitions))
            groups.append(
                [self._change(UPDATE, pk, order=c + 3), self._change(DELETE, pk, order=c + 3)]
            )
        return groups

    def _key(self, part: Any, ident: int) -> Key:
        if not self.key_space:
            return (part, ident)
        return (part, ident, self.rng.choice(self.key_space))

    def _pk(self, part: Any) -> Key:
        return self._key(part, self.rng.choice(self.window))

    def _missing_pk(self) -> Key:
        """A key neither live nor known to the table, just above this batch's ids."""
        model = self.model
        for attempt in range(1, 10_000):
            # A table-wide key has no partition in it: fewer keys fit the same id range.
            key = self._key(
                self.rng.choice(self.partitions),
                self.window.stop + self.rng.randrange(30 * attempt),
            )
            known = model.key_of(key)
            if known not in model.live.keys() | model.stored_order.keys() | self.issued:
                self.issued.add(known)
                return key
        raise AssertionError("no missing key found")

    def _existing(self) -> Key | None:
        live = sorted(self.model.live, key=repr)
        return self._ck(self.rng.choice(live)) if live else None

    def _ck(self, key: Key) -> Key:
        """The generator key ``(partition, *primary key)`` of a model key. A table-wide key
        names its row's partition half of the time, else any partition (a move)."""
        if not self.shape.table_wide:
            return key
        row = self.model.live.get(key)
        if row is not None and self.rng.random() < 0.5:
            return (self.model.partition_of(row), *key)
        return (self.rng.choice(self.partitions), *key)

    def _change(self, op: str, key: Key, *, late: bool = False, order: Any = None) -> Change:
        rng = self.rng
        self.issued.add(self.model.key_of(key))
        part = key[0]
        if part is None:
            part = rng.choice([None, ""])  # both spell the null partition
        columns = self.shape.change_key_columns
        values: dict[str, Any] = dict(zip(columns, (part, *key[1:]), strict=True))
        values["name"] = f"{rng.choice(NAMES)}-{rng.randrange(1000)}"
        values["amount"] = None if rng.random() < 0.1 else round(rng.uniform(-1e3, 1e3), 2)
        if self.shape.ordering is not None:
            self.clock += 1
            if order is None:
                order = self.clock - rng.randint(1, 400) if late else self.clock
            values[self.shape.ordering] = order
        return Change(op, rng.choice(SPELLINGS[op]), values)
