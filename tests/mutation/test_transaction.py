"""Transactions of the mutation API: locks at begin, heartbeats, the lock failure listener,
lock timeouts, misuse (as Hive's TestTransaction and TestLock)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.mutation.tables import ASIA_INDIA, alerts, begun, record, values
from versioned import mutation as vm
from versioned.errors import LockTimeoutError, TransactionError, TransactionExpiredError


def test_begin_locks_every_sink_table_shared_write_and_commit_releases_the_locks(
    lake: Any,
) -> None:
    alerts(lake)
    alerts(lake, "m.audit")
    client = vm.MutatorClient(lake, tables=["m.audit", "m.alerts"])
    txn = client.new_transaction()
    assert lake.engine_context.store.locks("m.alerts") == []
    txn.begin()
    for name in ("m.alerts", "m.audit"):
        (lock,) = lake.engine_context.store.locks(name)
        assert (lock.txn_id, lock.mode, lock.state, lock.partition_id) == (
            txn.transaction_id,
            "shared_write",
            "acquired",
            None,
        )
    txn.commit()
    assert (
        lake.engine_context.store.locks("m.alerts")
        == lake.engine_context.store.locks("m.audit")
        == []
    )


def test_abort_releases_the_locks(lake: Any) -> None:
    alerts(lake)
    txn = vm.MutatorClient(lake, tables=["m.alerts"]).new_transaction()
    txn.begin()
    txn.abort()
    assert lake.engine_context.store.locks("m.alerts") == []


def test_a_lock_wait_times_out_retryably_and_aborts_releasing_the_locks_taken(lake: Any) -> None:
    alerts(lake)
    alerts(lake, "m.audit")
    holder = vm.MutatorClient(lake, tables=["m.audit"]).new_transaction()
    holder.begin()
    client = vm.MutatorClient(lake, tables=["m.alerts", "m.audit"], lock_wait_s=0.2)
    txn = client.new_transaction()
    with pytest.raises(LockTimeoutError) as raised:
        txn.begin()
    assert raised.value.retryable and raised.value.exit_code == 75
    assert txn.state is vm.TransactionState.ABORTED
    assert (
        lake.engine_context.store.locks("m.alerts") == []
    )  # taken first (name order), released by the abort
    holder.commit()


def test_an_expired_transaction_calls_the_listener_and_cannot_commit(lake: Any) -> None:
    table = alerts(lake)
    heard: list[tuple[int, Exception]] = []
    client = vm.MutatorClient(
        lake,
        tables=["m.alerts"],
        transaction_timeout_s=0.3,
        heartbeat=False,
        lock_failure_listener=lambda txn_id, error: heard.append((txn_id, error)),
    )
    txn = client.new_transaction()
    txn.begin()
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert(ASIA_INDIA, record(vm.BucketIdResolver(table), 1, "late"))
    time.sleep(0.6)  # past the timeout: nobody heartbeats
    with pytest.raises(vm.MutationTransactionError, match="lost"):
        txn.commit()
    assert [(t, type(e)) for t, e in heard] == [(txn.transaction_id, TransactionExpiredError)]
    assert txn.state is vm.TransactionState.ABORTED
    assert values(table) == []


def test_the_heartbeat_thread_keeps_the_transaction_alive(lake: Any) -> None:
    table = alerts(lake)
    txn = begun(lake, "m.alerts", transaction_timeout_s=0.4)
    client = txn.client
    with client.coordinator(txn, "m.alerts") as coord:
        coord.insert(ASIA_INDIA, record(vm.BucketIdResolver(table), 1, "kept alive"))
    time.sleep(1.2)  # three timeouts
    txn.commit()
    assert values(table) == [("Asia", "India", 1, "kept alive")]


def test_a_transaction_lost_elsewhere_is_reported_by_the_heartbeat_thread(lake: Any) -> None:
    alerts(lake)
    heard = threading.Event()
    got: list[Any] = []

    def listener(txn_id: int, error: Exception) -> None:
        got.append((txn_id, error))
        heard.set()

    client = vm.MutatorClient(
        lake, tables=["m.alerts"], transaction_timeout_s=0.4, lock_failure_listener=listener
    )
    txn = client.new_transaction()
    txn.begin()
    lake.engine_context.store.abort(txn.transaction_id, "an operator killed it")
    assert heard.wait(30)
    assert got[0][0] == txn.transaction_id and isinstance(got[0][1], TransactionError)
    with pytest.raises(vm.MutationTransactionError, match="lost"):
        txn.commit()


def test_a_manual_heartbeat_reports_a_lost_transaction(lake: Any) -> None:
    alerts(lake)
    heard: list[int] = []
    client = vm.MutatorClient(
        lake,
        tables=["m.alerts"],
        heartbeat=False,
        lock_failure_listener=lambda t, e: heard.append(t),
    )
    txn = client.new_transaction()
    txn.begin()
    txn.heartbeat()
    lake.engine_context.store.abort(txn.transaction_id)
    with pytest.raises(vm.MutationTransactionError):
        txn.heartbeat()
    assert heard == [txn.transaction_id]


def test_misuse_is_refused_with_clear_errors(lake: Any) -> None:
    alerts(lake)
    client = vm.MutatorClient(lake, tables=["m.alerts"])
    txn = client.new_transaction()
    with pytest.raises(vm.MutationTransactionError, match="begin"):
        client.coordinator(txn, "m.alerts")
    with pytest.raises(vm.MutationTransactionError):
        txn.commit()
    txn.begin()
    with pytest.raises(vm.MutationTransactionError):
        txn.begin()
    txn.commit()
    txn.abort()  # a no-op once committed
    assert txn.state is vm.TransactionState.COMMITTED


def test_a_client_refuses_tables_of_another_layout(lake: Any) -> None:
    lake.create_table("m.plain", columns="id INT", primary_key="id")
    from versioned.errors import NotSupportedError

    with pytest.raises(NotSupportedError, match="must have layout acid") as refused:
        vm.MutatorClient(lake, tables=["m.plain"])
    assert (refused.value.layout, refused.value.operation) == ("versioned", "mutate")
    assert refused.value.exit_code == 2
