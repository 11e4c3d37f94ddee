"""Shared fixtures: one session-scoped SparkSession (local, or on the standalone cluster of
`make test-cluster`), one throw-away PostgreSQL cluster, and the markers that sort the suite
into tiers, derived from the fixtures each test uses (never written by hand):

* ``spark``: the test uses the shared SparkSession (the ``spark`` fixture, directly or through
  another fixture such as ``cat``);
* ``jvm``: the test starts processes of its own that start a JVM (the ``jvm_processes``
  fixture: worker processes with their own SparkSession, the real console script running a
  command that needs Spark, a cluster);
* ``postgres``: the test runs on the throw-away PostgreSQL cluster (``pg_cluster``,
  ``pg_url``, or the ``postgres`` parameter of ``catalog_url``).

`make check` runs every test marked neither ``spark`` nor ``jvm`` with Spark made impossible to
start (``SPARK_HOME`` names a folder that does not exist), so a test that starts a JVM
without saying so through its fixtures fails there instead of slowing the tier down.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.class_archive import ensure_archive
from tests.support.jvm_processes import JvmProcesses
from tests.support.postgres import PgCluster, start_cluster
from tests.support.run_seed import header, run_seed, seed_for
from tests.support.spark_cluster import EXECUTORS, MASTER, cluster_conf, wait_for_executors
from tests.support.spark_settings import (
    ENV_SHORT_LIVED_SESSION,
    LOCAL_INTERPRETED,
    SHARED_SESSION_JVM,
    SHORT_LIVED_JVM,
    hive_common_first,
)
from tests.support.test_warehouse import (
    PG_CATALOG,
    S3_TIER,
    catalog_for,
    start_s3_tier,
    stop_s3_tier,
    warehouse_for,
)

# Fixtures whose use means the test starts a JVM in a process of its own.
JVM_FIXTURES = frozenset({"jvm_processes"})
run_seed()  # read $VERSIONED_TEST_SEED now: each test's VERSIONED_* environment is cleared

POSTGRES_FIXTURES = frozenset({"pg_cluster", "pg_url", "alternating_catalog_url"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``spark``, ``jvm`` and ``postgres`` by the fixtures it uses."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        if "spark" in names:
            item.add_marker(pytest.mark.spark)
        if names & JVM_FIXTURES:
            item.add_marker(pytest.mark.jvm)
        if names & POSTGRES_FIXTURES or params.get("catalog_url") == "postgres":
            item.add_marker(pytest.mark.postgres)
        gap = item.get_closest_marker("s3_gap")
        if S3_TIER and gap is not None and params.get("layout") in gap.args[0]:
            reason = f"S3 tier, {params['layout']} layout: {gap.kwargs['reason']}"
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
        local = item.get_closest_marker("local_files")
        if S3_TIER and local is not None:
            reason = local.kwargs.get("reason", "looks at the warehouse's files on the local disk")
            item.add_marker(pytest.mark.skip(reason=f"S3 tier: {reason}"))


def pytest_report_header(config: pytest.Config) -> str:
    """The run's seed, so a failed randomized test can be replayed."""
    return header()


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """This test case's seed, drawn from the run's seed (tests/support/run_seed.py)."""
    return seed_for(request.node.nodeid)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one SparkSession all Spark tests share (built the way versioned builds it): local
    unless $VERSIONED_TEST_SPARK_MASTER names a cluster (tests/support/spark_cluster.py)."""
    from versioned.engine.spark.session import get_or_create_spark

    master = MASTER
    conf = {"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "3g"}
    conf.update(hive_common_first())  # tests/interop calls Hive 2.3's readers in this JVM
    if master:  # `make test-cluster`: executors are JVMs (and Python workers) of their own
        conf.update(cluster_conf())
    else:  # test data is tiny: compiling each query costs more than interpreting it
        conf.update(LOCAL_INTERPRETED)
    if S3_TIER:  # `make test-s3`: warehouses on an S3 server (tests/support/test_warehouse.py)
        conf.update(start_s3_tier())
    # Local sessions map the class archive, made first if need be (tests/support/class_archive.py).
    if os.environ.get(ENV_SHORT_LIVED_SESSION) == "1":  # `make soak`: minutes of Spark work
        conf["spark.driver.extraJavaOptions"] = f"{SHORT_LIVED_JVM} {ensure_archive()}"
    elif not master:  # the cluster's driver has its options from cluster_conf
        conf["spark.driver.extraJavaOptions"] = f"{SHARED_SESSION_JVM} {ensure_archive()}"
    # archive=False: the tests map their own archive, never one a user made
    session = get_or_create_spark(master or "local[2]", "versioned-tests", conf=conf, archive=False)
    if master:
        wait_for_executors(session, EXECUTORS)
    yield session
    session.stop()
    stop_s3_tier()


@pytest.fixture
def jvm_processes() -> Iterator[JvmProcesses]:
    """Starts processes that run a JVM of their own (the real console script running a
    command that needs Spark, worker processes with their own SparkSession, a cluster);
    kills what still runs at the end. Taking it marks the test ``jvm``."""
    ensure_archive()  # the worker processes' JVMs map it
    processes = JvmProcesses()
    try:
        yield processes
    finally:
        processes.close()


@pytest.fixture
def cat(spark: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A catalog (versioned.Catalog) on SQLite in a fresh warehouse (on the S3 server in the S3
    tier; on PostgreSQL with ``VERSIONED_TEST_CATALOG=postgres``), acting as alice."""
    from versioned.api.catalog import connect

    url = request.getfixturevalue("pg_url") if PG_CATALOG else catalog_for(tmp_path)
    catalog = connect(catalog=url, warehouse=warehouse_for(tmp_path), spark=spark, user="alice")
    yield catalog
    catalog.close()


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Any]:
    """Like ``cat`` (SQLite, a fresh warehouse, alice) but with no SparkSession: what the
    Spark-free clients (streaming, mutation) run on. A test that makes it start Spark fails
    in `make check`, whose tier has no Spark to start."""
    from versioned.api.catalog import connect

    catalog = connect(warehouse=str(tmp_path / "wh"), user="alice")
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
def alternating_catalog_url(
    request: pytest.FixtureRequest, pg_cluster: PgCluster, tmp_path: Path
) -> str:
    """A catalog for the soak's multi-process runs (four JVMs a case): SQLite or PostgreSQL
    by the run's seed, the two layouts on different ones. The soak's crash and concurrency
    tests each take one layout a run by the seed's lowest bit (`layout_by_seed`), so the
    catalog comes from the next bit: each run covers both catalogs and both layouts, and four
    consecutive seeds every layout on every catalog (the catalogs' own crash and race tests
    run on both every time: tests/catalog)."""
    layout = request.getfixturevalue("layout")
    flip = {"versioned": 0, "acid": 1}.get(layout, 0)
    if ((run_seed()[0] >> 1) + flip) % 2 == 0:
        return f"sqlite:///{tmp_path}/catalog.db"
    return pg_cluster.create_database()


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
