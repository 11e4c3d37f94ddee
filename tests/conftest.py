"""Shared fixtures: one session-scoped SparkSession (local, or on the standalone cluster of
`make test-cluster`), one throw-away PostgreSQL cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.postgres import PgCluster, start_cluster
from tests.support.spark_cluster import EXECUTORS, MASTER, cluster_conf, wait_for_executors


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one SparkSession all Spark tests share (built the way versioned builds it): local
    unless $VERSIONED_TEST_SPARK_MASTER names a cluster (tests/support/spark_cluster.py)."""
    from versioned.engine.spark.session import get_or_create_spark

    master = MASTER
    conf = {"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "3g"}
    if master:  # `make test-cluster`: executors are JVMs (and Python workers) of their own
        conf.update(cluster_conf())
    session = get_or_create_spark(master or "local[2]", "versioned-tests", conf=conf)
    if master:
        wait_for_executors(session, EXECUTORS)
    yield session
    session.stop()


@pytest.fixture
def cat(spark: Any, tmp_path: Path) -> Iterator[Any]:
    """A catalog (versioned.Catalog) on SQLite in a fresh warehouse, acting as alice."""
    from versioned.api.catalog import connect

    catalog = connect(warehouse=str(tmp_path / "wh"), spark=spark, user="alice")
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A PostgreSQL cluster on loopback for the whole run; stopped and deleted at the end."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> str:
    """SQLAlchemy URL of a fresh, empty PostgreSQL database."""
    return pg_cluster.create_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """SQLAlchemy URL of a fresh SQLite catalog file."""
    return f"sqlite:///{tmp_path}/catalog.db"


@pytest.fixture(params=["sqlite", "postgres"])
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every catalog behaviour test runs once against SQLite and once against PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """An empty warehouse directory."""
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a developer's VERSIONED_* environment."""
    for key in list(os.environ):
        if key.startswith("VERSIONED_"):
            monkeypatch.delenv(key, raising=False)
