"""What each page shows, assembled from a table's metadata rows (no Spark).

`overview` gives one `TableSummary` per table the user may read; `table_page` one table's
`TablePage`. Both read through a `MetadataCache`, so a table that did not commit since the
last request costs only the rows that change without a commit (streaming writers, open
transactions and locks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from versioned.api.catalog import Catalog
from versioned.api.catalog_overview import catalog_overview
from versioned.api.table import Table
from versioned.errors import NotFoundError, PermissionDeniedError
from versioned.ui.health import WINDOW, HealthMark, health_marks
from versioned.ui.metadata_cache import MetadataCache

RECENT_COMMITS = 50
"""Commits the table page lists (the chart shows them all)."""
LATEST_DEAD_LETTERS = 50
"""Dead letters the table page lists, newest first."""
COUNTS = ("inserted", "updated", "deleted", "rejected")


@dataclass(frozen=True)
class TableSummary:
    """One line of the overview."""

    name: str
    layout: str
    commits: int
    live_rows: int
    bytes: int
    partitions: int
    last_commit_at: datetime | None
    worst_amplification: float | None
    marks: list[HealthMark]


@dataclass(frozen=True)
class SchemaChange:
    """One ``alter`` commit: what it changed in the schema or the properties."""

    version: int
    committed_at: datetime
    user: str
    changes: list[str]


@dataclass(frozen=True)
class TablePage:
    """Everything the table page shows."""

    summary: TableSummary
    facts: dict[str, Any]
    columns: list[tuple[str, str, bool]]
    totals: dict[str, int]
    recent_commits: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    schema_changes: list[SchemaChange]
    writers: list[dict[str, Any]]
    dead_letters: list[dict[str, Any]]
    dead_letter_count: int
    transactions: list[dict[str, Any]]
    locks: list[dict[str, Any]]
    properties: dict[str, str] = field(default_factory=dict)


def overview(catalog: Catalog, cache: MetadataCache, now: datetime) -> list[TableSummary]:
    """A summary of every table the catalog's user may read, by name: from the partition
    summaries the tables' commits stored, read for all tables at once; a table with a
    partition not summarised has its ``partitions`` rows computed (and cached)."""
    summaries = []
    for facts in catalog_overview(catalog, latest=2 * WINDOW):
        table = Table(catalog, facts.info)
        try:
            partitions = facts.partitions
            if partitions is None:
                partitions = cache.rows(table, "partitions")
            summaries.append(
                _summary(table, facts.commits, facts.latest, partitions, facts.writers, now)
            )
        except (NotFoundError, PermissionDeniedError):
            continue  # dropped, or its grant taken back, since the listing
    return sorted(summaries, key=lambda s: s.name)


def summarise(
    table: Table,
    cache: MetadataCache,
    now: datetime,
    writers: list[dict[str, Any]] | None = None,
) -> TableSummary:
    """The overview's line for ``table`` (resolved for read by the caller), from its
    metadata rows, with its streaming ``writers`` (default: read now)."""
    history = cache.rows(table, "history")
    partitions = cache.rows(table, "partitions")
    if writers is None:
        writers = cache.rows(table, "stream_progress")
    return _summary(table, len(history), history, partitions, writers, now)


def _summary(
    table: Table,
    commits: int,
    history: Sequence[Mapping[str, Any]],
    partitions: Sequence[Mapping[str, Any]],
    writers: Sequence[Mapping[str, Any]],
    now: datetime,
) -> TableSummary:
    """The overview's line from the table's ``history`` rows (its latest ones at least:
    the health rules look back `WINDOW` twice), ``partitions`` and ``stream_progress``."""
    amplifications = [
        p["read_amplification"] for p in partitions if p["read_amplification"] is not None
    ]
    return TableSummary(
        name=str(table.name),
        layout=table.spec.layout,
        commits=commits,
        live_rows=sum(p["live_rows_estimate"] or 0 for p in partitions),
        bytes=sum(p["bytes"] or 0 for p in partitions),
        partitions=len(partitions),
        last_commit_at=history[-1]["committed_at"] if history else None,
        worst_amplification=max(amplifications) if amplifications else None,
        marks=health_marks(history, partitions, writers, now),
    )


def table_page(table: Table, cache: MetadataCache, now: datetime) -> TablePage:
    """The table page of ``table`` (resolved for read by the caller)."""
    history = cache.rows(table, "history")
    partitions = cache.rows(table, "partitions")
    writers = cache.rows(table, "stream_progress")
    summary = summarise(table, cache, now, writers)
    letters = cache.rows(table, "dead_letters")
    spec, info = table.spec, table.info
    facts = {
        "layout": spec.layout,
        "file format": spec.file_format,
        "primary key": ", ".join(spec.primary_key),
        "partitioned by": ", ".join(spec.partition_by) or "(not partitioned)",
        "owner": info.owner,
        "created": datetime.fromtimestamp(info.created_at).astimezone(),
        "current version": max((h["version"] for h in history), default=None),
    }
    if spec.bucket_by:
        facts["bucketed by"] = f"{', '.join(spec.bucket_by)} into {spec.buckets} buckets"
    return TablePage(
        summary=summary,
        facts=facts,
        columns=[(c.name, c.type, c.nullable) for c in spec.columns],
        totals={k: sum(h[k] or 0 for h in history) for k in COUNTS},
        recent_commits=list(reversed(history[-RECENT_COMMITS:])),
        partitions=partitions,
        schema_changes=cache.get(table, "schema_changes", lambda: schema_changes(table)),
        writers=[{**w, "age_s": (now - w["recorded_at"]).total_seconds()} for w in writers],
        dead_letters=list(reversed(letters[-LATEST_DEAD_LETTERS:])),
        dead_letter_count=len(letters),
        transactions=cache.rows(table, "transactions"),
        locks=cache.rows(table, "locks"),
        properties=dict(spec.properties),
    )


def schema_changes(table: Table) -> list[SchemaChange]:
    """The table's ``alter`` commits, newest first, each with what it changed."""
    found = []
    for commit in table.history():
        if commit.operation != "alter":
            continue
        found.append(
            SchemaChange(
                version=commit.version,
                committed_at=datetime.fromtimestamp(commit.committed_at).astimezone(),
                user=commit.user,
                changes=describe_alter(commit.metrics),
            )
        )
    return list(reversed(found))


def describe_alter(metrics: Mapping[str, Any]) -> list[str]:
    """An ``alter`` commit's metrics in words, as ``versioned alter-table`` prints them."""
    changes = [f"added {c}" for c in _listed(metrics.get("added_columns"))]
    changes += [f"widened {c}" for c in _listed(metrics.get("widened_columns"))]
    props = metrics.get("set_properties") or {}
    changes += [f"set {k}={v}" for k, v in props.items()]
    changes += [f"removed property {k}" for k in _listed(metrics.get("unset_properties"))]
    return changes


def _listed(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else []
