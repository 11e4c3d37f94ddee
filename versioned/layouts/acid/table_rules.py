"""What an acid table's definition must satisfy, and the settings it derives from it.

Checked when the table is created (so a definition Hive could not read, or our writer could
not bucket, fails before anything is stored) and shown by ``describe``. Hive's rules:

* ``bucketing_version`` (table property) is 1 or 2; Hive 3 creates tables with 2.
* Bucket columns may be any columns of a hashable type (`bucket_hash.hash_kind`), key or
  not, but not partition columns (`TableSpec` refuses those). A key lookup reads only the
  key's bucket when the primary key contains every bucket column; otherwise a key may sit
  in any bucket and the lookup reads them all.
* A transactional table cannot be sorted (Hive: "cannot support full ACID functionality
  since it is sorted"): its files are ordered by ROW__ID.
* ``write.driver_max_events`` (table property, ours): a batch of at most this many ACID
  events (default 250,000) is written by the driver with pyorc, a larger one by Spark's
  ORC writer (`engine.acid.driver_events` says why); ``0`` always uses Spark.
* ``read.driver_max_events`` (table property, ours): bucket files of few rows are read by the
  driver with pyarrow (`engine.acid.driver_reads` says why), up to this many events per
  read (default 1,000,000); ``0`` always reads with Spark.
* A partition column sits beside the ACID event fields when the files are read (the data
  columns are inside the ``row`` struct), so it may not share a name with one of them.
"""

from __future__ import annotations

from typing import Any

from versioned.errors import SchemaError
from versioned.layouts.acid.bucket_hash import BucketingVersion, hash_kind
from versioned.layouts.acid.orc_schema import EVENT_FIELDS, ROW
from versioned.layouts.table_properties import whole_number_property
from versioned.schema import TableSpec

BUCKETING_VERSION_PROPERTY = "bucketing_version"
"""Table property choosing Hive's bucket hash: ``2`` (Murmur3, the default) or ``1``."""


DRIVER_WRITE_PROPERTY = "write.driver_max_events"
"""Table property: the most ACID events of one write the driver writes itself."""
DEFAULT_DRIVER_WRITE_MAX_EVENTS = 250_000


DRIVER_READ_PROPERTY = "read.driver_max_events"
"""Table property: the most ACID events of small bucket files one read takes on the driver."""
DEFAULT_DRIVER_READ_MAX_EVENTS = 1_000_000


def driver_write_max_events(spec: TableSpec) -> int:
    """The table's ``write.driver_max_events`` property (default 250,000).

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    return whole_number_property(
        spec,
        DRIVER_WRITE_PROPERTY,
        DEFAULT_DRIVER_WRITE_MAX_EVENTS,
        "0 writes every batch with Spark",
    )


def driver_read_max_events(spec: TableSpec) -> int:
    """The table's ``read.driver_max_events`` property (default 1,000,000).

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    return whole_number_property(
        spec, DRIVER_READ_PROPERTY, DEFAULT_DRIVER_READ_MAX_EVENTS, "0 reads every file with Spark"
    )


def bucketing_version(spec: TableSpec) -> BucketingVersion:
    """The table's ``bucketing_version`` property: 2 (Hive 3's default) unless it says 1.

    Raises:
        SchemaError: The property is neither 1 nor 2.
    """
    raw = str(spec.properties.get(BUCKETING_VERSION_PROPERTY, "2")).strip()
    if raw not in ("1", "2"):
        raise SchemaError(
            f"table property {BUCKETING_VERSION_PROPERTY}={raw!r} of {spec.name} must be 1 or "
            "2 (Hive's bucket hash versions; 2 is Hive 3's default)",
            bucketing_version=raw,
        )
    return 1 if raw == "1" else 2


def acid_table_settings(spec: TableSpec) -> dict[str, Any]:
    """Check an acid table definition; return what it implies (``describe`` shows it).

    Returns:
        ``bucketing_version``, ``key_lookup`` (which bucket files a key lookup reads),
        ``write.driver_max_events`` and ``read.driver_max_events``.

    Raises:
        SchemaError: The table is sorted, a partition column is named like an ACID event
            field, a bucket column's type has no Hive bucket hash versioned reproduces, or
            ``bucketing_version`` is not 1 or 2, or ``write.driver_max_events`` or
            ``read.driver_max_events`` is not a whole number.
    """
    fields = {f.lower() for f in (*EVENT_FIELDS, ROW)}
    clash = [p for p in spec.partition_by if p.lower() in fields]
    if clash:
        raise SchemaError(
            f"partition column(s) {', '.join(clash)} of {spec.name} share a name with the "
            f"ACID event fields ({', '.join((*EVENT_FIELDS, ROW))}) that acid files hold "
            "beside the partition columns; rename the partition column",
            partition_by=clash,
        )
    if spec.sort_by:
        raise SchemaError(
            "the acid layout cannot sort its files (Hive refuses SORTED BY on transactional "
            "tables: rows are ordered by ROW__ID); drop --sort-by",
            sort_by=list(spec.sort_by),
        )
    for name in spec.bucket_by:
        hash_kind(spec.column(name).type)
    version = bucketing_version(spec)
    return {
        BUCKETING_VERSION_PROPERTY: version,
        "key_lookup": _key_lookup(spec),
        DRIVER_WRITE_PROPERTY: driver_write_max_events(spec),
        DRIVER_READ_PROPERTY: driver_read_max_events(spec),
    }


def _key_lookup(spec: TableSpec) -> str:
    """Which bucket files an upsert reads to find a key's stored row, in one sentence."""
    if not spec.bucket_by:
        return "bucket 0 (the table is not bucketed)"
    outside = [c for c in spec.bucket_by if c not in spec.primary_key]
    if not outside:
        return "the key's bucket only (the primary key holds every bucket column)"
    return (
        f"every bucket: bucket column{'s' if len(outside) > 1 else ''} {', '.join(outside)} "
        f"{'are' if len(outside) > 1 else 'is'} not part of the primary key, so a key's bucket "
        "is not known from the key"
    )
