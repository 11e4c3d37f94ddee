"""One task's change rows, computed where the task runs (an executor), without Spark."""

from __future__ import annotations

import pyarrow as pa

from versioned.change_stream.change_rows import change_rows
from versioned.errors import StorageError
from versioned.layouts.abilities import streams_changes
from versioned.layouts.base import layout_of
from versioned.layouts.change_task import CommitTask
from versioned.storage.filesystem import FileIO


def commit_changes(task: CommitTask, schema: pa.Schema) -> pa.Table:
    """The change rows of ``task`` (one commit, or some partitions of it) in ``schema``.

    Raises:
        StorageError: A file the catalog lists cannot be read (deleted by hand, or by a
            vacuum since the micro-batch was planned).
    """
    fileio = FileIO.for_root(task.warehouse)
    try:
        layout = streams_changes(layout_of(task.layout), task.spec.name)
        images = layout.change_images()(task, fileio)
    except StorageError as exc:
        raise StorageError(
            f"{task.spec.name}: cannot read the changes of version {task.stamp.version}: {exc}",
            table=str(task.spec.name),
            version=task.stamp.version,
        ) from exc
    return change_rows(images, record_key=task.spec.record_key, stamp=task.stamp, schema=schema)
