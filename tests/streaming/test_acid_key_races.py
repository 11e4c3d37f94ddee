"""Two writers replace the same key of an acid table at once (found by the mixed-load history
check, tests/faults): the one that looked the key's row up before the other committed must
not leave a second live row. Streaming ingest plans its delete events again and commits;
the mutation API refuses (its caller reads again). No Spark: the streaming and mutation
clients write, `lake_rows` reads as they read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mutation.tables import begun
from tests.support.lake_rows import ROW_ID, lake_rows
from versioned import mutation as vm
from versioned import streaming as vs
from versioned.api.catalog import connect

DAY = "2024-01-01"


@pytest.fixture
def cat(tmp_path: Path) -> Any:
    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    cat.create_table(
        "d.ev",
        columns="id BIGINT, msg STRING, day STRING",
        primary_key="id",
        partition_by="day",
        layout="acid",
        bucket_by="id",
        buckets=2,
    )
    yield cat
    cat.close()


def _stream(cat: Any, lines: list[str], *, before_commit: Any = None) -> None:
    """One streamed transaction of ``id,msg`` lines; ``before_commit`` runs once between
    the batch's key lookup and its catalog commit."""
    endpoint = vs.EndPoint(cat, "d.ev", partition_values=[DAY])
    with endpoint.connect(create_partition=True, agent="race") as conn:
        writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
        with conn.fetch_transaction_batch(1, writer) as batch:
            if before_commit is not None:
                sink = batch._sink  # the moment between its lookup and its commit
                prepare = sink.prepare_commit

                def prepared_then_raced(txn_id: int, write_id: int) -> Any:
                    change = prepare(txn_id, write_id)
                    if not raced:
                        raced.append(True)
                        before_commit()
                    return change

                raced: list[bool] = []
                sink.prepare_commit = prepared_then_raced
            batch.begin_next_transaction()
            batch.write_many(lines)
            batch.commit()


def _live(cat: Any) -> list[tuple[int, str]]:
    return sorted((r["id"], r["msg"]) for r in lake_rows(cat.table("d.ev")))


def test_a_stream_whose_key_changed_after_its_lookup_replaces_the_new_row(cat: Any) -> None:
    _stream(cat, ["1,first", "2,first"])
    _stream(cat, ["1,late"], before_commit=lambda: _stream(cat, ["1,meanwhile"]))
    assert _live(cat) == [(1, "late"), (2, "first")]  # one live row per key


def test_a_mutation_whose_row_changed_after_its_check_is_refused(cat: Any) -> None:
    _stream(cat, ["1,first", "2,first"])
    row = next(r for r in lake_rows(cat.table("d.ev"), with_row_id=True) if r["id"] == 1)
    txn = begun(cat, "d.ev", create_partitions=True)
    client = txn.client
    with client.coordinator(txn, "d.ev") as coord:
        coord.update([DAY], {**row, "msg": "mutated", ROW_ID: vm.RecordIdentifier(*row[ROW_ID])})
    commit_tables = client.store.commit_tables

    def raced(*args: Any, **kwargs: Any) -> Any:
        _stream(cat, ["1,meanwhile"])  # after the mutation's liveness check, before its commit
        return commit_tables(*args, **kwargs)

    client.store.commit_tables = raced
    with pytest.raises(vm.MutationConflictError):
        txn.commit()
    client.close()
    assert _live(cat) == [(1, "meanwhile"), (2, "first")]
