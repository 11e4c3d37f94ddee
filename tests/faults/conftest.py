"""Fixtures of the fault tests (`make faults`): a durable PostgreSQL cluster of their own,
which they crash and restart, reached through a TCP proxy that can lose a COMMIT's answer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.postgres import PgCluster, start_cluster
from tests.support.tcp_proxy import TcpProxy


@pytest.fixture(scope="module")
def durable_pg() -> Iterator[PgCluster]:
    """A cluster with PostgreSQL's durable defaults (fsync, synchronous commit): a crash
    loses no acknowledged commit. Module-scoped: its tests crash and restart it."""
    cluster = start_cluster(durable=True)
    try:
        yield cluster
    finally:
        cluster.stop()


@dataclass
class FaultyCatalog:
    """A fresh database on `durable_pg`, and the faults the tests inject into it."""

    cluster: PgCluster
    proxy: TcpProxy
    database: str

    @property
    def url(self) -> str:
        """The catalog URL clients use: through the proxy."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.proxy.port}/{self.database}"

    def terminate_backends(self) -> int:
        """``pg_terminate_backend`` every connection to the database (as an operator
        would); returns how many. Waits until they are gone."""
        import time

        import psycopg

        query = (
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()"
        )
        left = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        )
        with psycopg.connect(
            host="127.0.0.1", port=self.cluster.port, user="postgres", autocommit=True
        ) as conn:
            row = conn.execute(query, (self.database,)).fetchone()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                gone = conn.execute(left, (self.database,)).fetchone()
                if gone is not None and gone[0] == 0:
                    break
                time.sleep(0.02)
        return int(row[0]) if row else 0


@pytest.fixture
def faulty(durable_pg: PgCluster) -> Iterator[FaultyCatalog]:
    """A fresh catalog database on the durable cluster, reached through a proxy."""
    url = durable_pg.create_database()
    proxy = TcpProxy(durable_pg.port)
    try:
        yield FaultyCatalog(durable_pg, proxy, url.rsplit("/", 1)[1])
    finally:
        proxy.close()
