"""The streaming side of `Table`: the exactly-once ``foreachBatch`` sink, its progress, and the
table's changes as a stream (``docs/streaming-sink.md``, ``docs/change-stream.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from versioned.api.catalog import Catalog
    from versioned.api.stream_sink import StreamSink
    from versioned.api.table import Table
    from versioned.catalog.store import MetaStore
    from versioned.names import TableName


class TableStreams:
    """Streaming operations of a table (mixed into `versioned.api.table.Table`)."""

    catalog: Catalog

    @property
    def name(self) -> TableName:  # pragma: no cover - Table defines it
        raise NotImplementedError

    @property
    def _catalog_store(self) -> MetaStore:
        return self.catalog.engine_context.store

    def stream_writer(self, writer_id: str | None = None, **upsert_options: Any) -> StreamSink:
        """A function for ``df.writeStream.foreachBatch(...)`` that upserts each micro-batch
        exactly once, replays included; ``upsert_options`` are `upsert`'s keyword arguments.
        ``writer_id`` defaults to the streaming query's id, kept in its checkpoint; give a
        new one with a new checkpoint (``docs/streaming-sink.md``)."""
        from versioned.api.stream_sink import StreamSink

        return StreamSink(cast("Table", self), writer_id, upsert_options)

    def stream_progress(self) -> dict[str, int]:
        """The last micro-batch id each streaming writer recorded, by writer id."""
        return {p.writer_id: p.batch_id for p in self._catalog_store.stream_progress(self.name)}

    def reset_stream_progress(self, writer_id: str) -> bool:
        """Forget a writer's progress (its batch ids count from 0 again); whether it had any."""
        return self._catalog_store.forget_stream_progress(self.name, writer_id) > 0

    def change_stream(
        self,
        *,
        starting_version: int | str | None = None,
        max_commits_per_trigger: int | None = None,
    ) -> DataFrame:
        """The table's committed changes, commit by commit, as a streaming DataFrame (from
        the first commit, a version, or ``"latest"``); see ``docs/change-stream.md``."""
        from versioned.api.change_stream import change_stream

        return change_stream(
            cast("Table", self),
            starting_version=starting_version,
            max_commits_per_trigger=max_commits_per_trigger,
        )
