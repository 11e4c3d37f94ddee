"""Where the tests' warehouses live: a local folder, or (the S3 tier, issue 46) a prefix of a
bucket on a throw-away S3 server on loopback.

``VERSIONED_TEST_WAREHOUSE=s3`` (read when the tests start: each test's ``VERSIONED_*``
environment is cleared) runs the tests with every warehouse a test asks `warehouse_for`
for on the S3 server the ``spark`` fixture starts (`start_s3_tier`): the shared session gets
Hadoop's S3A connector (the cached ``s3a`` jar set of ``make jars``) and the process, so also
Spark's Python workers, the server's AWS settings (a cluster's executors get them as
``spark.executorEnv.*``). ``make test-s3`` runs the tier; ``make test-cluster-s3`` runs the
tests marked ``cluster`` on a standalone cluster of two Workers that share nothing with the
driver but the S3 server and a PostgreSQL catalog.

A test that looks at the warehouse's files on the local disk is marked ``local_files``; the S3
tier leaves it out (``-m 'not local_files'``), saying so in the marker's description.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from tests.support.s3_server import S3Server

ENV_TEST_WAREHOUSE = "VERSIONED_TEST_WAREHOUSE"
S3_TIER = os.environ.get(ENV_TEST_WAREHOUSE, "").strip().lower() == "s3"
ENV_TEST_CATALOG = "VERSIONED_TEST_CATALOG"
PG_CATALOG = os.environ.get(ENV_TEST_CATALOG, "").strip().lower() == "postgres"
"""``VERSIONED_TEST_CATALOG=postgres``: the ``cat`` fixture's catalog is a database of the
tests' PostgreSQL cluster (`make test-cluster-s3`: nothing but the S3 server and PostgreSQL is
shared by the driver and the executors)."""
BUCKET = "lake"
_server: list[S3Server] = []


def warehouse_for(tmp_path: Path, name: str = "wh") -> str:
    """A fresh, empty warehouse for a test: ``tmp_path/name``, or in the S3 tier a prefix of
    its own in the tier's bucket."""
    if not S3_TIER:
        return str(tmp_path / name)
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}/{name}"


def catalog_for(tmp_path: Path) -> str | None:
    """The catalog of a `warehouse_for` warehouse: versioned's default (SQLite inside the
    warehouse), or in the S3 tier a SQLite file in ``tmp_path`` (the default cannot live in a
    bucket)."""
    return f"sqlite:///{tmp_path}/catalog.db" if S3_TIER else None


def start_s3_tier() -> dict[str, str]:
    """Start the tier's S3 server (once), create its bucket and put its AWS settings into this
    process's environment (before Spark starts: its Python workers inherit them); returns the
    Spark configuration the shared session needs (S3A's settings and jars)."""
    from benchmarks.harness.jars import jars
    from versioned.engine.spark.s3a import ENV_SPARK_JARS, session_settings
    from versioned.storage.object_store import s3_location

    if not _server:
        work = Path(tempfile.mkdtemp(prefix="versioned-s3-tier-"))
        server = S3Server.start(work, record=False)
        server.create_bucket(BUCKET)
        _server.append(server)
    aws = _server[0].env()
    os.environ.update(aws)
    os.environ[ENV_SPARK_JARS] = ",".join(str(p) for p in jars("s3a"))
    try:
        settings = session_settings(s3_location(f"s3://{BUCKET}"))
        # Executors of a cluster, and their Python workers (pyarrow), reach the server too:
        # a user gives them the AWS settings the same way (or an instance role).
        settings.update({f"spark.executorEnv.{k}": v for k, v in aws.items()})
        return settings
    finally:
        del os.environ[ENV_SPARK_JARS]


def tier_server() -> S3Server:
    """The S3 tier's server (started by `start_s3_tier`)."""
    if not _server:
        raise RuntimeError("the S3 tier's server runs only with VERSIONED_TEST_WAREHOUSE=s3")
    return _server[0]


def stop_s3_tier() -> None:
    """Stop the tier's S3 server, if it runs."""
    while _server:
        _server.pop().stop()


def files_under(cat: Any, under: str = "") -> set[str]:
    """The files under ``under`` (a folder relative to ``cat``'s warehouse; default: all),
    relative to it, through the catalog's file system: local or on the S3 server."""
    fileio = cat.engine_context.fileio
    prefix = f"{under.rstrip('/')}/" if under else ""
    return {s.path[len(prefix) :] for s in fileio.list_files(under) if s.path.startswith(prefix)}


def read_text(cat: Any, rel: str) -> str:
    """A warehouse file's text, through the catalog's file system."""
    data: bytes = cat.engine_context.fileio.read_bytes(rel)
    return data.decode()


def write_bytes(cat: Any, rel: str, data: bytes) -> None:
    """Put a file into the warehouse (e.g. an orphan), through the catalog's file system."""
    cat.engine_context.fileio.write_bytes_atomic(rel, data)
