"""Tables the record-writer tests stream into (Hive TestStreaming's fixtures, translated)."""

from __future__ import annotations

from dataclasses import dataclass

from versioned.schema import TableSpec

# TestStreaming's testing.alerts: (id int, msg string) partitioned by (continent, country).
ALERTS = TableSpec.build(
    "testing.alerts",
    columns="id INT, msg STRING, continent STRING, country STRING",
    primary_key="id",
    partition_by="continent,country",
)
# testing2.alerts: unpartitioned.
ALERTS2 = TableSpec.build("testing2.alerts", columns="id INT, msg STRING", primary_key="id")
# Three data columns, so that fewer field names than columns can be tested.
EVENTS = TableSpec.build(
    "testing.events",
    columns="id BIGINT, kind STRING, note VARCHAR(10), day STRING",
    primary_key="id",
    partition_by="day",
)


@dataclass(frozen=True)
class Endpoint:
    """The one thing a writer asks of an endpoint: its table's spec."""

    spec: TableSpec


def one_column(type_name: str, **properties: str) -> TableSpec:
    """A table with key ``id`` and one more column ``v`` of ``type_name``."""
    return TableSpec.build(
        "testing.values",
        columns=f"id INT, v {type_name}",
        primary_key="id",
        properties=properties,
    )
