"""A mixed-load history of one table, and its check against a plain Python model.

`run` starts, on one table of the PostgreSQL catalog of the fault tests: an upserting writer
(`Table.upsert`, Spark), a streaming-ingest writer (no Spark), on an acid table a writer
through the mutation API (updates and deletes by ROW__ID, no Spark), a compactor (besides the
table's own maintenance, which is on), a vacuum, a reader of random snapshots, and a fault
injector that kills every catalog connection (``pg_terminate_backend``) at random moments.
Each records every operation it made: what it wrote, what it was told (version, or error),
what it read at which commit.

`check` then takes the table's committed history (commit order) and replays the writes it
lists on a dict (key -> value), proving:

* no acknowledged write is lost, none is applied twice, and nothing committed that no writer
  wrote (each data commit is one recorded write, found by its version or transaction id);
* a write that failed committed only when its error said the outcome was unknown;
* snapshot isolation: each read equals the model as of the commit it read, and no key has
  two live rows in any read.

Every random choice comes from the seed; the same seed makes the same plan (the threads'
interleaving, and so the history, is the machine's).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.lake_rows import lake_rows
from tests.table.sales import make_table
from tests.table.workers import batch_table
from versioned import mutation as vm
from versioned import streaming as vs
from versioned.api.catalog import Catalog
from versioned.errors import CommitOutcomeUnknownError, VersionedError
from versioned.layouts.abilities import CanMutate
from versioned.layouts.base import layout_of

KEYS = 60
"""Keys 0..KEYS-1; key k lives in partition "ab"[k % 2] (keys never move)."""
MARKER = 1_000_000
"""Each write also writes a key of its own (`marker`): every write changes at least one row."""


def marker(op_id: int, part: str) -> int:
    """The key only write ``op_id`` writes, in partition ``part``."""
    return MARKER + 2 * op_id + "ab".index(part)


@dataclass
class Op:
    """One operation as its client saw it."""

    id: int
    kind: str
    rows: list[tuple[int, float | None]] = field(default_factory=list)
    ok: bool = False
    error: str | None = None
    unknown: bool = False
    version: int | None = None
    txn_id: int | None = None
    read_seq: int | None = None
    read_rows: list[tuple[int, float]] | None = None


@dataclass
class History:
    """What one run did: its operations and faults, and the table's final history."""

    seed: int
    layout: str
    ops: list[Op]
    faults: int
    commits: list[Any]
    seconds: float


class _Log:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.lock = threading.Lock()
        self.next_id = 0

    def new(self, kind: str) -> Op:
        with self.lock:
            self.next_id += 1
            op = Op(self.next_id, kind)
            self.ops.append(op)
            return op


def run(
    open_catalog: Callable[[], Catalog],
    strike: Callable[[], object],
    *,
    layout: str,
    seed: int,
    writes: int = 24,
    reads: int = 12,
) -> History:
    """Run the mixed load (``writes`` upserts and as many streamed transactions, ``reads``
    reads, a compaction and a vacuum every few writes) with ``strike`` (a catalog fault)
    at random moments; returns what happened."""
    started = time.monotonic()
    setup = open_catalog()
    properties = {"auto_compact": "true", "auto_compact.min_rows": "1"}
    make_table(setup, layout=layout, properties=properties)
    log = _Log()
    done = threading.Event()
    errors: list[BaseException] = []
    faults = [0]

    def guarded(work: Callable[[random.Random], None], salt: int) -> Callable[[], None]:
        def body() -> None:
            try:
                work(random.Random(seed * 1000 + salt))
            except BaseException as exc:  # a bug in the workload itself: fails the run
                errors.append(exc)

        return body

    def upserts(rng: random.Random) -> None:
        cat = open_catalog()
        t = cat.table("t.sales", need="write")
        for _ in range(writes):
            op = log.new("upsert")
            keys = rng.sample(range(KEYS), rng.randint(1, 8))
            rows = [(k, None if rng.random() < 0.25 else float(op.id)) for k in keys]
            rows.append((marker(op.id, "a"), float(op.id)))
            op.rows = rows
            batch = [[k, v, "D" if v is None else "U", "ab"[k % 2]] for k, v in rows]
            try:
                op.version = t.upsert(batch_table(batch)).version
                op.ok = True
            except VersionedError as exc:
                _failed(op, exc)

    def streams(rng: random.Random) -> None:
        cat = open_catalog()
        for _ in range(writes):
            op = log.new("stream")
            part = rng.choice("ab")
            keys = [k for k in rng.sample(range(KEYS), 8) if "ab"[k % 2] == part][:4]
            keys.append(marker(op.id, part))
            op.rows = [(k, float(op.id)) for k in keys]
            try:
                endpoint = vs.EndPoint(cat, "t.sales", partition_values=[part])
                with endpoint.connect(create_partition=True, agent="history") as conn:
                    writer = vs.DelimitedInputWriter(["id", "amt"], ",", endpoint=endpoint)
                    with conn.fetch_transaction_batch(1, writer) as batch:
                        batch.begin_next_transaction()
                        op.txn_id = batch.current_transaction_id
                        batch.write_many([f"{k},{v}" for k, v in op.rows])
                        batch.commit()
                op.ok = True
            except VersionedError as exc:
                _failed(op, exc)

    def mutations(rng: random.Random) -> None:
        """The mutation API (acid): one transaction of a few updates and deletes by the
        ROW__IDs of a fresh read, and an insert of the write's own key."""
        cat = open_catalog()
        t = cat.table("t.sales", need="write")
        client = vm.MutatorClient(cat, tables=["t.sales"], create_partitions=True)
        resolver = vm.BucketIdResolver(t)
        try:
            for _ in range(writes // 2):
                time.sleep(rng.uniform(0.1, 0.8))
                op = log.new("mutate")
                txn = None
                try:
                    live = [
                        r
                        for r in lake_rows(t, with_row_id=True)
                        if r["p"] == "a" and r["id"] < MARKER
                    ]
                    value = float(op.id)
                    own = {"id": marker(op.id, "a"), "amt": value, "op": "I", "p": "a"}
                    records = [("insert", resolver.attach_bucket_id(own))]
                    for r in rng.sample(live, min(len(live), rng.randint(1, 3))):
                        rid = vm.RecordIdentifier(*r["ROW__ID"])
                        kind = "delete" if rng.random() < 0.3 else "update"
                        records.append((kind, {**r, "amt": value, "ROW__ID": rid}))
                    # Grouped by bucket, ascending ROW__ID within (the coordinator's contract).
                    records.sort(
                        key=lambda kr: (
                            kr[1]["ROW__ID"].bucket_id,
                            kr[0] != "insert",
                            kr[1]["ROW__ID"].write_id,
                            kr[1]["ROW__ID"].row_id,
                        )
                    )
                    op.rows = [
                        (int(r["id"]), None if kind == "delete" else value) for kind, r in records
                    ]
                    txn = client.new_transaction()
                    txn.begin()
                    op.txn_id = txn.transaction_id
                    with client.coordinator(txn, "t.sales") as coord:
                        for kind, r in records:
                            if kind == "insert":
                                coord.insert(["a"], r)
                            elif kind == "update":
                                coord.update(["a"], r)
                            else:
                                coord.delete(["a"], {"ROW__ID": r["ROW__ID"]})
                    txn.commit()
                    op.ok = True
                except VersionedError as exc:
                    _failed(op, exc)
                    if txn is not None and txn.state.name == "OPEN":
                        with contextlib.suppress(VersionedError):
                            txn.abort()
        finally:
            client.close()

    def maintenance(rng: random.Random) -> None:
        cat = open_catalog()
        t = cat.table("t.sales", need="write")
        while not done.is_set():
            time.sleep(rng.uniform(0.5, 2.0))
            op = log.new(rng.choice(["compact", "vacuum"]))
            try:
                if op.kind == "compact":
                    t.compact()
                else:
                    t.vacuum(retain_hours=24.0, grace_hours=0.0)
                op.ok = True
            except VersionedError as exc:
                _failed(op, exc)

    def reader(rng: random.Random) -> None:
        cat = open_catalog()
        t = cat.table("t.sales")
        for _ in range(reads):
            time.sleep(rng.uniform(0.2, 1.5))
            op = log.new("read")
            try:
                history = t.history()
                if not history:
                    continue
                commit = rng.choice(history)
                snapshot = t.snapshot(commit.version)
                frame = t._read(snapshot, with_version=False, with_row_id=False)
                op.read_rows = [(int(r["id"]), r["amt"]) for r in frame.collect()]
                op.read_seq = snapshot.seq
                op.ok = True
            except VersionedError as exc:
                _failed(op, exc)

    def injector(rng: random.Random) -> None:
        while not done.wait(rng.uniform(0.3, 1.5)):
            strike()
            faults[0] += 1

    writers = [
        threading.Thread(target=guarded(upserts, 1)),
        threading.Thread(target=guarded(streams, 2)),
    ]
    if isinstance(layout_of(layout), CanMutate):  # the mutation API's sink tables
        writers.append(threading.Thread(target=guarded(mutations, 6)))
    others = [
        threading.Thread(target=guarded(maintenance, 3)),
        threading.Thread(target=guarded(reader, 4)),
        threading.Thread(target=guarded(injector, 5)),
    ]
    for th in writers + others:
        th.start()
    for th in writers:
        th.join()
    done.set()
    for th in others:
        th.join()
    if errors:
        raise errors[0]
    commits = sorted(open_catalog().table("t.sales").history(), key=lambda c: c.seq)
    return History(seed, layout, log.ops, faults[0], commits, time.monotonic() - started)


def _failed(op: Op, exc: VersionedError) -> None:
    op.error = f"{type(exc).__name__}: {exc}"
    op.unknown = isinstance(exc, CommitOutcomeUnknownError)
    txn = getattr(exc, "txn_id", None)
    if op.txn_id is None and isinstance(txn, int):
        op.txn_id = txn


DATA_OPERATIONS = frozenset({"upsert", "stream", "delete", "mutate"})
"""Commit operations that change rows (the others, compactions and alters, change none)."""
WRITES = ("upsert", "stream", "mutate")
"""The recorded operations that write rows."""


def check(history: History) -> list[str]:
    """What the history breaks (empty: nothing), as sentences."""
    problems: list[str] = []
    writes = [o for o in history.ops if o.kind in WRITES]
    by_version = {o.version: o for o in writes if o.version is not None}
    by_txn = {o.txn_id: o for o in writes if o.txn_id is not None}
    model: dict[int, float] = {}
    at_seq: dict[int, dict[int, float]] = {0: {}}
    applied: dict[int, int] = {}
    for c in history.commits:
        if c.operation in DATA_OPERATIONS:
            op = by_txn.get(c.txn_id) or by_version.get(c.version)
            if op is None:
                problems.append(
                    f"commit {c.seq} ({c.operation}, version {c.version}) "
                    "was made by no recorded write"
                )
            else:
                applied[op.id] = applied.get(op.id, 0) + 1
                if not op.ok and not op.unknown:
                    problems.append(
                        f"write {op.id} failed ({op.error}) yet committed as commit {c.seq}"
                    )
                for key, value in op.rows:
                    if value is None:
                        model.pop(key, None)
                    else:
                        model[key] = value
        at_seq[c.seq] = dict(model)
    for op in writes:
        if op.ok and applied.get(op.id, 0) != 1:
            problems.append(
                f"acknowledged write {op.id} ({op.kind}) is in the history "
                f"{applied.get(op.id, 0)} times"
            )
        if not op.ok and applied.get(op.id, 0) > 1:
            problems.append(f"failed write {op.id} committed {applied[op.id]} times")
    for op in history.ops:
        if op.kind != "read" or not op.ok or op.read_seq is None or op.read_rows is None:
            continue
        keys = [k for k, _ in op.read_rows]
        if len(keys) != len(set(keys)):
            problems.append(f"read {op.id} at commit {op.read_seq} shows a key twice")
        expected = at_seq.get(op.read_seq)
        if expected is None:
            problems.append(f"read {op.id} read commit {op.read_seq}, which is not in the history")
        elif sorted(op.read_rows) != sorted(expected.items()):
            wrong = sorted(set(op.read_rows) ^ set(expected.items()))[:5]
            by = {o.id: o.kind for o in writes}
            who = sorted({f"{int(v)}={by.get(int(v), '?')}" for _, v in wrong if v is not None})
            problems.append(
                f"read {op.id} at commit {op.read_seq} differs from the model: {wrong} "
                f"(written by {', '.join(who)})"
            )
    return problems


def summary(history: History) -> str:
    """One line: seed, layout, operations by kind and outcome, faults, commits."""
    kinds: dict[str, list[int]] = {}
    for op in history.ops:
        counts = kinds.setdefault(op.kind, [0, 0])
        counts[0 if op.ok else 1] += 1
    parts = ", ".join(f"{k} {ok} ok/{bad} failed" for k, (ok, bad) in sorted(kinds.items()))
    why: dict[str, int] = {}
    for op in history.ops:
        if op.error is not None:
            name = f"{op.kind} {op.error.split(':')[0]}"
            why[name] = why.get(name, 0) + 1
    failures = (
        "; failures: " + ", ".join(f"{k} x{n}" for k, n in sorted(why.items())) if why else ""
    )
    return (
        f"seed {history.seed} ({history.layout}): {parts}; {history.faults} connection kills; "
        f"{len(history.commits)} commits; {history.seconds:.0f} s{failures}"
    )
