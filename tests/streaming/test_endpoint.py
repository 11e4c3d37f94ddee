"""`EndPoint.connect` checks the table, its partition values and the user's rights, and
creates a missing partition when asked (Hive's TestStreaming: testEndpointConnection,
testAddPartition, the ConnectionError cases)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.layout_profiles import LAYOUTS, table_args
from versioned import streaming as vs
from versioned.errors import PermissionDeniedError


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _alerts(lake: Any, layout: str) -> Any:
    extra = table_args(layout, buckets=2)
    return lake.create_table(
        "testing.alerts",
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="id",
        partition_by="continent,country",
        layout=layout,
        **extra,
    )


def test_an_unknown_table_is_an_invalid_table(lake: Any) -> None:
    with pytest.raises(vs.InvalidTable, match=r"testing\.nope"):
        vs.EndPoint(lake, "testing.nope", ["Asia", "India"]).connect()


def test_partition_values_must_fit_the_table(lake: Any, layout: str) -> None:
    _alerts(lake, layout)
    lake.create_table(
        "testing.flat", columns="id INT NOT NULL, msg STRING", primary_key="id", layout=layout
    )
    with pytest.raises(vs.StreamingConnectionError, match=r"partitioned by \(continent, country\)"):
        vs.EndPoint(lake, "testing.alerts").connect()
    with pytest.raises(vs.StreamingConnectionError, match="2 partition values needed"):
        vs.EndPoint(lake, "testing.alerts", ["Asia"]).connect()
    with pytest.raises(vs.StreamingConnectionError, match="not partitioned"):
        vs.EndPoint(lake, "testing.flat", ["Asia"]).connect()
    with vs.EndPoint(lake, "testing.flat", []).connect() as conn:
        assert conn.partition.values == ()


def test_a_missing_partition_is_invalid_unless_created(lake: Any, layout: str) -> None:
    _alerts(lake, layout)
    endpoint = vs.EndPoint(lake, "testing.alerts", ["Asia", "India"])
    with pytest.raises(vs.InvalidPartition, match="create_partition=True"):
        endpoint.connect()
    assert lake.engine_context.store.partitions(endpoint.table) == []
    with endpoint.connect(create_partition=True, agent="flume-1") as conn:
        assert conn.partition.values == ("Asia", "India")
        assert conn.agent == "flume-1"
    assert [p.values for p in lake.engine_context.store.partitions(endpoint.table)] == [
        ("Asia", "India")
    ]
    with endpoint.connect() as again:  # now it exists
        assert again.partition.id == conn.partition.id


def test_racing_connections_create_one_partition(lake: Any, layout: str) -> None:
    _alerts(lake, layout)
    endpoint = vs.EndPoint(lake, "testing.alerts", ["Europe", "Ä/ß b"])

    def connect(_: int) -> int:
        with endpoint.connect(create_partition=True) as conn:
            return conn.partition.id

    with ThreadPoolExecutor(6) as pool:
        ids = list(pool.map(connect, range(6)))  # any error is raised here
    assert len(ids) == 6 and len(set(ids)) == 1
    assert [p.values for p in lake.engine_context.store.partitions(endpoint.table)] == [
        ("Europe", "Ä/ß b")
    ]


def test_streaming_needs_write_permission(lake: Any, layout: str) -> None:
    import versioned

    _alerts(lake, layout)
    lake.engine_context.store.add_partition(
        vs.EndPoint(lake, "testing.alerts").table, ["Asia", "India"]
    )
    settings = lake.settings
    bob = versioned.connect(catalog=settings.catalog_url, warehouse=settings.warehouse, user="bob")
    try:
        with pytest.raises(PermissionDeniedError, match=r"grant write testing\.alerts bob"):
            vs.EndPoint(bob, "testing.alerts", ["Asia", "India"]).connect()
        lake.grant("bob", "read", "testing.alerts")
        with pytest.raises(PermissionDeniedError, match="bob"):
            vs.EndPoint(bob, "testing.alerts", ["Asia", "India"]).connect()
        lake.grant("bob", "write", "testing.alerts")
        with vs.EndPoint(bob, "testing.alerts", ["Asia", "India"]).connect() as conn:
            assert not conn.closed
        assert conn.closed
    finally:
        bob.close()
