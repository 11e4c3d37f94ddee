"""Where a change feed's files are, what format they hold, and the order they are read in.

Input order: files in the order given, each directory or glob expanded in path order, then
rows in file order. Each file is scanned on its own and ``_seq`` is
``monotonically_increasing_id()`` over the union of the scans in that order: Spark numbers the
partitions of a union one child after the other, and a lone file's splits stay in offset
order, so ``_seq`` increases in input order across the whole batch (it is not contiguous).
A single scan over many files would not do: Spark packs files into partitions by size.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import reduce

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from versioned.engine.feeds.rows import IN_SEQ, IN_SOURCE
from versioned.errors import InputError

FEED_FORMATS: tuple[str, ...] = ("csv", "json", "parquet", "debezium")
_EXTENSIONS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
}
_COMPRESSIONS = (".gz", ".bz2", ".zst", ".lz4", ".snappy", ".deflate")


def feed_paths(source: object) -> list[str]:
    """The paths of a feed given as one path or a sequence of them.

    Raises:
        InputError: ``source`` is neither a path nor a non-empty sequence of paths.
    """
    items = [source] if isinstance(source, str | os.PathLike) else source
    if not isinstance(items, Sequence) or not items:
        raise InputError(
            "a feed is a DataFrame, a pyarrow.Table, or one or more file paths; "
            f"got {type(source).__name__}"
        )
    paths = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise InputError(f"a feed path must be a string or path, got {type(item).__name__}")
        paths.append(os.fspath(item))
    return paths


def format_from_names(paths: Sequence[str]) -> str:
    """The feed format the paths' extensions name (``.csv``, ``.json``/``.jsonl``/``.ndjson``,
    ``.parquet``; a compression suffix such as ``.gz`` is looked through).

    Raises:
        InputError: A path has no known extension (e.g. a directory), or the paths disagree.
    """
    found = set()
    for path in paths:
        name = path.rstrip("/").lower()
        name = next((name[: -len(c)] for c in _COMPRESSIONS if name.endswith(c)), name)
        fmt = next((f for ext, f in _EXTENSIONS.items() if name.endswith(ext)), None)
        if fmt is None:
            raise InputError(
                f"cannot tell the format of {path} from its name; give the format (--format "
                "in the command line, format= in Python): one of "
                f"{', '.join(FEED_FORMATS)}"
            )
        found.add(fmt)
    if len(found) > 1:
        raise InputError(f"feed paths mix formats ({', '.join(sorted(found))}); read them apart")
    return found.pop()


def list_feed_files(spark: SparkSession, paths: Sequence[str]) -> list[str]:
    """The data files under ``paths`` as Spark URIs, in input order (listing only, no job).

    Hidden files (``_SUCCESS``, ``.crc``) are skipped as Spark skips them. Plain local files
    are named without asking Spark (`local_file_uri`): its Hadoop file system takes a
    second or more to start in a new process.

    Raises:
        InputError: A path does not exist or cannot be listed.
    """
    files: dict[str, None] = {}
    for path in paths:
        uri = local_file_uri(path)
        if uri is not None:
            files[uri] = None
            continue
        try:
            listed = spark.read.text(path).inputFiles()
        except AnalysisException as error:
            first_line = str(error).strip().splitlines()[0]
            raise InputError(f"cannot read feed {path}: {first_line}", path=path) from error
        files.update(dict.fromkeys(sorted(listed)))
    return list(files)


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+=,@~/")
"""Characters a local path may hold for `local_file_uri` to name it as Spark does (Hadoop
writes others percent-encoded, or reads them as glob patterns)."""


def local_file_uri(path: str) -> str | None:
    """``file:///abs/path`` for ``path`` when it is a plain local file, named as Spark names it
    (a path of plain characters, no compression suffix, not hidden); else None (Spark lists
    it: a directory, a glob, a URI, another file system)."""
    if path.startswith("file:"):
        path = path[len("file:") :]
        if path.startswith("//"):  # file:///abs: an empty authority
            path = path[2:]
        if not path.startswith("/"):
            return None
    elif ":" in path:
        return None
    absolute = os.path.abspath(path)
    name = os.path.basename(absolute)
    if not set(absolute) <= _PLAIN or name.startswith(("_", ".")):
        return None
    if name.lower().endswith(_COMPRESSIONS) or not os.path.isfile(absolute):
        return None
    return f"file://{absolute}"


def local_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI (``file:///abs`` or ``file:/abs``) of a plain local
    file (as `local_file_uri` sees it: one Python reads as Spark does); None for any other."""
    if uri.startswith("file:///"):
        path = uri[len("file://") :]
    elif uri.startswith("file:/") and not uri.startswith("file://"):
        path = uri[len("file:") :]
    else:
        return None
    return path if local_file_uri(path) is not None else None


def describe(files: Sequence[str], fmt: str) -> str:
    """How messages name a feed of ``files``."""
    return files[0] if len(files) == 1 else f"{len(files)} {fmt} files ({files[0]}, ...)"


def scan_in_order(files: Sequence[str], scan: Callable[[str], DataFrame]) -> DataFrame:
    """One scan per file, unioned in file order, plus ``#source`` (the file) and ``#seq``.

    Args:
        files: The files, in input order.
        scan: Reads one file; every scan must have the same columns, none named ``_source``
            or ``#seq``.

    Returns:
        The lazy union with ``#seq`` (the feed's ``_seq``) increasing in input order.
    """
    parts = [scan(path).select("*", F.lit(path).alias(IN_SOURCE)) for path in files]
    return reduce(DataFrame.unionAll, parts).withColumn(IN_SEQ, F.monotonically_increasing_id())
