"""What can be known about a feed of local files before Spark starts.

A missing path, a CSV header or Parquet schema that does not fit the table, a file named
``.parquet`` that is not Parquet, and an input without a single row are answered here in
well under a second, instead of after the JVM's start-up. Anything this module cannot tell
(URIs other than local paths, brace globs, compressions other than gzip and bzip2, JSON
keys) is left to the Spark reader, which checks everything again.
"""

from __future__ import annotations

import bz2
import csv
import glob
import gzip
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from versioned.errors import InputError
from versioned.schema import TableSpec

_EXTENSIONS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open}
_OTHER_COMPRESSIONS = (".zst", ".lz4", ".snappy", ".deflate")


@dataclass(frozen=True)
class FeedCheck:
    """What the check found.

    Attributes:
        files: The local data files, in input order.
        empty: No file holds a row (empty files, CSV headers only, blank lines only).
    """

    files: tuple[str, ...]
    empty: bool


def precheck_feed(
    source: object,
    spec: TableSpec,
    *,
    format: str | None,
    op_code_column: str | None,
    partial: bool = False,
) -> FeedCheck | None:
    """Check a feed of local files; ``None`` when it is not one this module can check.

    Raises:
        InputError: A path does not exist, or a Parquet file is not Parquet.
        versioned.errors.SchemaError: A CSV header or Parquet schema does not fit the table.
    """
    paths = _paths(source)
    if paths is None or any(_is_uri(p) or "{" in p for p in paths):
        return None
    files: list[str] = []
    for path in paths:
        files += _expand(path)
    fmt = format or _format(files)
    op_column = None if fmt == "debezium" else (op_code_column or spec.op_code_column)
    holds_rows = False
    if fmt == "parquet":
        holds_rows = _check_parquet(files, spec, op_column, partial)
    elif fmt in ("csv", "json", "debezium"):
        for path in files:
            rows = (
                _csv_rows(path, spec, op_column, partial) if fmt == "csv" else _json_rows(path, fmt)
            )
            holds_rows = holds_rows or rows
    else:
        return None
    return FeedCheck(tuple(files), empty=not holds_rows)


def _paths(source: object) -> list[str] | None:
    items = [source] if isinstance(source, str | os.PathLike) else source
    if not isinstance(items, list | tuple) or not items:
        return None
    if not all(isinstance(i, str | os.PathLike) for i in items):
        return None
    return [os.fspath(i) for i in items]


def _is_uri(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _expand(path: str) -> list[str]:
    """The data files a path names, as Spark lists them (hidden files skipped)."""
    local = path.removeprefix("file://")
    if any(c in local for c in "*?["):
        matches = sorted(glob.glob(local))
        if not matches:
            raise InputError(f"cannot read feed {path}: no file matches it", path=path)
    elif not os.path.exists(local):
        raise InputError(f"cannot read feed {path}: it does not exist", path=path)
    else:
        matches = [local]
    found = []
    for match in matches:
        if os.path.isdir(match):
            for root, dirs, names in os.walk(match):
                dirs[:] = sorted(d for d in dirs if not _hidden(d))
                found += [os.path.join(root, n) for n in sorted(names) if not _hidden(n)]
        elif not _hidden(os.path.basename(match)):
            found.append(match)
    return found


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _format(files: Sequence[str]) -> str | None:
    """The format the files' names tell, when they agree."""
    kinds: set[str | None] = set()
    for path in files:
        name = path.lower()
        for suffix in (*_OPENERS, *_OTHER_COMPRESSIONS):
            name = name.removesuffix(suffix)
        if name.endswith(".parquet"):
            kinds.add("parquet")
        else:
            kinds.add(next((f for e, f in _EXTENSIONS.items() if name.endswith(e)), None))
    return kinds.pop() if len(kinds) == 1 else None


@contextmanager
def _text(path: str) -> Iterator[IO[str] | None]:
    """The file as text (gzip and bzip2 looked through); None for other compressions."""
    if path.lower().endswith(_OTHER_COMPRESSIONS):
        yield None
        return
    opener = next((o for s, o in _OPENERS.items() if path.lower().endswith(s)), None)
    if opener is None:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            yield handle
    else:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:  # type: ignore[operator]
            yield handle


def _csv_rows(path: str, spec: TableSpec, op_column: str | None, partial: bool) -> bool:
    """Whether a CSV file holds a record after its header; checks the header."""
    try:
        with _text(path) as handle:
            if handle is None:
                return True
            records = (r for r in csv.reader(handle) if r)
            header = next(records, None)
            if header is None:
                return False
            names = [h.strip().lower() for h in header]
            if all(names) and len(set(names)) == len(names):  # else Spark renames columns
                _map_columns(header, spec, path, op_column, partial)
            return next(records, None) is not None
    except (UnicodeDecodeError, csv.Error, OSError, EOFError):
        return True  # Spark reads it, dead-letters what it cannot parse, or says why


def _json_rows(path: str, fmt: str) -> bool:
    """Whether a JSON Lines file has a line that is not blank (nor a Kafka tombstone)."""
    blank = {"", "null"} if fmt == "debezium" else {""}
    try:
        with _text(path) as handle:
            return handle is None or any(line.strip() not in blank for line in handle)
    except (UnicodeDecodeError, OSError, EOFError):
        return True


def _check_parquet(
    files: Sequence[str], spec: TableSpec, op_column: str | None, partial: bool
) -> bool:
    """Whether the Parquet files hold a row; checks that each is Parquet and their columns."""
    import pyarrow.parquet as pq

    names: dict[str, None] = {}
    rows = 0
    for path in files:
        try:
            meta = pq.read_metadata(path)
        except (OSError, ValueError) as error:
            raise InputError(f"cannot read feed {path}: not a Parquet file ({error})") from None
        rows += meta.num_rows
        names.update(dict.fromkeys(meta.schema.to_arrow_schema().names))
    if files:
        label = files[0] if len(files) == 1 else f"{len(files)} parquet files ({files[0]}, ...)"
        _map_columns(list(names), spec, label, op_column, partial)
    return rows > 0


def _map_columns(
    columns: list[str], spec: TableSpec, source: str, op_column: str | None, partial: bool
) -> None:
    """`map_columns` as the Spark reader will call it (its warnings are left to that call)."""
    from versioned.engine.feeds import schema as feed_schema

    logger = logging.getLogger(feed_schema.__name__)
    disabled, logger.disabled = logger.disabled, True
    try:
        feed_schema.map_columns(
            columns, spec, source=source, op_code_column=op_column, partial=partial
        )
    finally:
        logger.disabled = disabled
