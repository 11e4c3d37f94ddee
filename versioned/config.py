"""Configuration resolved once: explicit arguments > environment > defaults."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from versioned.errors import ConfigError

ENV_CATALOG = "VERSIONED_CATALOG"
ENV_WAREHOUSE = "VERSIONED_WAREHOUSE"
ENV_SPARK_MASTER = "VERSIONED_SPARK_MASTER"
ENV_USER = "VERSIONED_USER"
ENV_LOG_LEVEL = "VERSIONED_LOG_LEVEL"

DEFAULT_WAREHOUSE = "./warehouse"
DEFAULT_SPARK_MASTER = "local[*]"
# log4j's levels; a level asks for Spark's own output on stderr (quiet without one).
LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
VERBOSE_LOG_LEVEL = "WARN"


@dataclass(frozen=True)
class Settings:
    """Where the catalog and the data live, which Spark to use, and who is acting.

    Attributes:
        catalog_url: SQLAlchemy URL of the catalog database.
        warehouse: Absolute local path or URI (``file://``, ``s3://``, ...) of the warehouse root.
        spark_master: Spark master URL used when versioned creates the SparkSession.
        user: The principal whose permissions are checked.
        log_level: log4j level of Spark's output on stderr (Spark's log and the JVM's own
            lines); ``None`` keeps Spark quiet.
        catalog_outage_s: How long to keep trying a catalog that cannot be reached;
            ``None``: ``VERSIONED_CATALOG_OUTAGE_S``, else 30 s.
    """

    catalog_url: str
    warehouse: str
    spark_master: str
    user: str
    log_level: str | None = None
    catalog_outage_s: float | None = None

    @property
    def warehouse_is_local(self) -> bool:
        """Whether the warehouse is on the local file system."""
        return urlparse(self.warehouse).scheme in ("", "file")


def resolve_settings(
    *,
    catalog: str | None = None,
    warehouse: str | None = None,
    spark_master: str | None = None,
    user: str | None = None,
    verbose: bool = False,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings with the precedence arguments > environment > defaults.

    The default catalog is an SQLite file inside the warehouse (``<warehouse>/catalog.db``).
    Spark stays quiet unless ``VERSIONED_LOG_LEVEL`` names a level or ``verbose`` asks for
    its output (at that level, else at WARN).
    """
    env = os.environ if env is None else env
    wh = warehouse or env.get(ENV_WAREHOUSE) or DEFAULT_WAREHOUSE
    wh = _normalise_warehouse(wh)
    cat = catalog or env.get(ENV_CATALOG) or _default_catalog_url(wh)
    if "://" not in cat:
        raise ConfigError(
            f"catalog {cat!r} is not an SQLAlchemy URL; use e.g. sqlite:////path/catalog.db "
            "or postgresql+psycopg://user@host/db",
            catalog=cat,
        )
    master = spark_master or env.get(ENV_SPARK_MASTER) or DEFAULT_SPARK_MASTER
    who = user or env.get(ENV_USER) or _os_user()
    level = log_level(env.get(ENV_LOG_LEVEL))
    if verbose and level is None:
        level = VERBOSE_LOG_LEVEL
    return Settings(catalog_url=cat, warehouse=wh, spark_master=master, user=who, log_level=level)


def log_level(value: str | None) -> str | None:
    """A log4j level name (any case) as log4j spells it; ``None`` (or empty) or ``OFF``:
    quiet."""
    if value is None or not value.strip():
        return None
    level = value.strip().upper()
    if level == "WARNING":
        level = "WARN"
    if level not in LOG_LEVELS:
        raise ConfigError(
            f"{ENV_LOG_LEVEL}={value!r} is not a log level; use one of "
            f"{', '.join(LOG_LEVELS)} (or unset it for a quiet Spark)",
            log_level=value,
        )
    return None if level == "OFF" else level


def _normalise_warehouse(value: str) -> str:
    parsed = urlparse(value)
    if parsed.scheme and len(parsed.scheme) > 1 and parsed.scheme != "file":
        return value.rstrip("/")
    path = parsed.path if parsed.scheme == "file" else value
    return str(Path(path).expanduser().resolve())


def _default_catalog_url(warehouse: str) -> str:
    parsed = urlparse(warehouse)
    if parsed.scheme and len(parsed.scheme) > 1:
        raise ConfigError(
            f"the warehouse {warehouse!r} is not local, so the default SQLite catalog cannot "
            f"live in it; set --catalog or {ENV_CATALOG}",
            warehouse=warehouse,
        )
    return f"sqlite:///{warehouse}/catalog.db"


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for the uid (containers)
        return f"uid{os.getuid()}"
