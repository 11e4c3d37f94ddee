"""A throw-away PostgreSQL cluster on loopback, started and stopped by the tests.

CI machines have the Debian PostgreSQL packages installed but no server running. As root we
run the server binaries as the ``postgres`` user (initdb refuses root); otherwise as ourselves.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCluster:
    base: Path
    port: int
    bindir: Path
    as_postgres: bool
    options: str = ""

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """Create a fresh empty database and return its SQLAlchemy URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def pg_ctl(self, *args: str) -> None:
        """Run ``pg_ctl -D <data> ARGS`` (as ``postgres`` when root), waiting for it."""
        data = str(self.base / "data")
        log = str(self.base / "server.log")
        self._run(str(self.bindir / "pg_ctl"), "-D", data, "-l", log, "-w", "-t", "60", *args)

    def restart(self) -> None:
        """Crash the server (``-m immediate``: no shutdown checkpoint) and start it again."""
        self.pg_ctl("-o", self.options, "-m", "immediate", "restart")

    def halt(self) -> None:
        """Crash the server and leave it down (`resume` starts it)."""
        self.pg_ctl("-m", "immediate", "stop")

    def resume(self) -> None:
        """Start a halted server."""
        self.pg_ctl("-o", self.options, "start")

    def stop(self) -> None:
        try:
            self._run(
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.base / "data"),
                "-m",
                "immediate",
                "-w",
                "stop",
            )
        finally:
            shutil.rmtree(self.base, ignore_errors=True)


def start_cluster(*, durable: bool = False) -> PgCluster:
    """initdb + start a cluster with trust auth on 127.0.0.1 and a random free port.

    The default cluster trades durability for speed (``fsync``, ``synchronous_commit`` and
    ``full_page_writes`` off): a crash may lose its latest commits. ``durable`` keeps
    PostgreSQL's defaults, so that a crash loses no acknowledged commit (the fault tests
    crash it on purpose)."""
    bindir = _bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries (pg_ctl, initdb) are not installed")
    as_postgres = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="versioned-pg-"))
    if as_postgres:
        shutil.chown(base, "postgres", "postgres")
    cluster = PgCluster(base=base, port=_free_port(), bindir=bindir, as_postgres=as_postgres)
    cluster._run(
        str(bindir / "initdb"),
        "-D",
        str(base / "data"),
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--no-sync",
    )
    fast = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    opts = (
        f"-p {cluster.port} -k {base} -c listen_addresses=127.0.0.1 "
        + ("" if durable else fast)
        + "-c max_connections=200 "
        # Logical decoding (tests/support/pg_logical.py reads a test_decoding slot).
        "-c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10"
    )
    cluster.options = opts
    cluster._run(
        str(bindir / "pg_ctl"),
        "-D",
        str(base / "data"),
        "-o",
        opts,
        "-l",
        str(base / "server.log"),
        "-w",
        "-t",
        "60",
        "start",
    )
    return cluster
