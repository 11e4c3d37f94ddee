"""The options of ``spark.readStream.format("versioned")``, resolved once.

The data source runs in processes of its own (a planner process on the driver, Python
workers on the executors), never in the caller's interpreter, so it cannot see the caller's
`Catalog`: it locates the catalog from its options, then from the defaults the session's
registration baked in (`register_data_source` with a catalog), then from the ``VERSIONED_*``
environment, as `versioned.connect` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from versioned.config import Settings, resolve_settings
from versioned.errors import InputError
from versioned.names import TableName

TABLE = "table"
CATALOG = "catalog"
WAREHOUSE = "warehouse"
USER = "user"
STARTING_VERSION = "startingversion"
MAX_COMMITS = "maxcommitspertrigger"
OPTIONS = (TABLE, CATALOG, WAREHOUSE, USER, STARTING_VERSION, MAX_COMMITS)
"""Every option the source reads (Spark passes option names in lower case)."""
EARLIEST = "earliest"
LATEST = "latest"


@dataclass(frozen=True)
class StreamOptions:
    """A change stream's resolved options.

    Attributes:
        table: The table whose changes are read.
        settings: Where the catalog and warehouse are, and who reads.
        starting_version: ``None`` (from the table's first commit), ``"latest"`` (commits
            after the query starts) or the version of the first commit to read.
        max_commits: At most this many commits per micro-batch (``None``: all available).
    """

    table: TableName
    settings: Settings
    starting_version: int | str | None = None
    max_commits: int | None = None


def stream_options(
    options: Mapping[str, str], defaults: Mapping[str, str] | None = None
) -> StreamOptions:
    """Resolve the data source's options (over ``defaults``, then the environment).

    Raises:
        InputError: ``table`` is missing, or an option has a bad value.
    """
    given = {str(k).lower(): v for k, v in (defaults or {}).items()}
    given.update({str(k).lower(): v for k, v in options.items() if v is not None})
    table = given.get(TABLE)
    if not table:
        raise InputError(
            'the versioned change stream needs the table: .option("table", "db.table")',
            option=TABLE,
        )
    settings = resolve_settings(
        catalog=given.get(CATALOG) or None,
        warehouse=given.get(WAREHOUSE) or None,
        user=given.get(USER) or None,
    )
    return StreamOptions(
        table=TableName.parse(table),
        settings=settings,
        starting_version=_starting_version(given.get(STARTING_VERSION)),
        max_commits=_positive(given.get(MAX_COMMITS), "maxCommitsPerTrigger"),
    )


def _starting_version(value: str | None) -> int | str | None:
    if value is None or value.strip().lower() in ("", EARLIEST):
        return None
    text = value.strip().lower()
    if text == LATEST:
        return LATEST
    try:
        version = int(text)
    except ValueError:
        version = -1
    if version < 0:
        raise InputError(
            f"startingVersion {value!r} is not a version: use a version number from "
            "`versioned history`, 'earliest' (the default: every commit) or 'latest'",
            option="startingVersion",
            value=value,
        )
    return version


def _positive(value: str | None, name: str) -> int | None:
    if value is None or not value.strip():
        return None
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise InputError(f"{name} must be a positive number, got {value!r}", option=name)
    return number
