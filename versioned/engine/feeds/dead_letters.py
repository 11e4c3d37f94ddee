"""Writing a feed's rejected rows to the table's dead-letter area (JSON lines with reasons)."""

from __future__ import annotations

import time

from pyspark import StorageLevel

from versioned.engine.feeds.reader import Feed
from versioned.storage.filesystem import FileIO


def write_dead_letters(
    feed: Feed, fileio: FileIO, dead_letter_dir: str, *, counted: int | None = None
) -> tuple[int, str | None]:
    """Count the rejected rows and, if any, write them; returns the count and the folder.

    Only a batch with rejected rows is read again (`Feed.rejected_count` was taken while
    the batch was read, or the writer ``counted`` them as it wrote the batch).
    """
    known = counted if counted is not None else feed.rejected_count()
    if known == 0:
        return 0, None
    rejected = feed.rejected.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = rejected.count()
        if count == 0:
            return 0, None
        rel = f"{dead_letter_dir}/batch={int(time.time() * 1000)}-{id(feed):x}"
        rejected.coalesce(1).write.mode("errorifexists").json(fileio.full_path(rel))
        return count, rel
    finally:
        rejected.unpersist()
