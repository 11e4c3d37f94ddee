"""``versioned ui`` on the command line: its help, the one line it prints, serving until a
signal, its one-line error without the ``ui`` extra, and its pages while the catalog cannot
be reached. No Spark starts: this tier runs with ``SPARK_HOME`` pointing nowhere, and the
served process imports no pyspark."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.postgres import PgCluster
from tests.support.tcp_proxy import TcpProxy
from tests.ui.catalogs import fill, make_table
from versioned.cli.main import cli


def test_help_says_what_it_shows_whose_grants_apply_and_how_to_run_it_on_the_demo() -> None:
    result = CliRunner().invoke(cli, ["ui", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "read-only" in text
    assert "--user" in text and "may read" in text
    assert "versioned --warehouse demo-output/warehouse --user demo ui" in text
    assert "--port" in text and "8765" in text and "127.0.0.1" in text


def test_without_the_ui_extra_it_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # as if it were not installed
    result = CliRunner().invoke(cli, ["--warehouse", str(tmp_path / "wh"), "ui"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: versioned ui needs starlette: pip install 'versioned[ui]'"
    ]


def test_it_serves_the_page_as_its_user_until_interrupted(tmp_path: Path) -> None:
    from versioned.api.catalog import connect

    warehouse = str(tmp_path / "wh")
    cat = connect(warehouse=warehouse, user="alice")
    make_table(cat, "d.ev", "versioned")
    fill(cat, "d.ev", commits=2)
    cat.close()
    probe = (
        "import runpy, sys, atexit;"
        "atexit.register(lambda: print('pyspark imported' if any("
        "m.startswith('pyspark') for m in sys.modules) else 'no pyspark', file=sys.stderr));"
        "sys.argv = ['versioned'] + sys.argv[1:];"
        "runpy.run_module('versioned.cli.main', run_name='__main__')"
    )
    env = {**os.environ, "SPARK_HOME": "/nonexistent/ui-starts-no-spark"}
    args = ["--warehouse", warehouse, "--user", "alice", "ui", "--port", "0"]
    process = subprocess.Popen(
        [sys.executable, "-c", probe, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("versioned ui: http://127.0.0.1:"), line
        assert "(user alice, read-only; Ctrl-C stops it)" in line
        url = line.split()[2]
        overview = _get(url)
        assert "d.ev" in overview
        assert "commits.svg" in _get(url + "table/d.ev")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert out == ""  # stdout carries answers only; the page is not one
    assert "interrupted: nothing was committed" in err
    assert "no pyspark" in err


def test_while_the_catalog_is_unreachable_pages_say_so_with_503_and_it_recovers(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """Each request that cannot reach the catalog answers 503 with a page that says so and
    reloads itself, and prints one line on stderr (it was a bare 500 and uvicorn's
    tracebacks); once the catalog is back, the pages are."""
    from versioned.api.catalog import connect

    proxy = TcpProxy(pg_cluster.port)  # between the page and the server, which others share
    url = pg_cluster.create_database().replace(f":{pg_cluster.port}/", f":{proxy.port}/")
    warehouse = str(tmp_path / "wh")
    cat = connect(catalog=url, warehouse=warehouse, user="alice")
    make_table(cat, "d.ev", "versioned")
    fill(cat, "d.ev", commits=2)
    cat.close()
    args = ["--catalog", url, "--warehouse", warehouse, "--user", "alice", "ui", "--port", "0"]
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("versioned")), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SPARK_HOME": "/nonexistent/ui-starts-no-spark"},
    )
    try:
        assert process.stderr is not None
        base = process.stderr.readline().split()[2]
        assert "d.ev" in _get(base)
        proxy.refuse()
        for path in ("", "table/d.ev"):
            with pytest.raises(urllib.error.HTTPError) as failed:
                _get(base + path)
            assert failed.value.code == 503
            assert failed.value.headers["Retry-After"] == "10"
            page = failed.value.read().decode()
            assert "Catalog unreachable" in page and "tries again every 10 seconds" in page
            assert '<meta http-equiv="refresh" content="10">' in page
        proxy.accept()
        assert "d.ev" in _get(base)
        assert "commits.svg" in _get(base + "table/d.ev")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        proxy.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = err.splitlines()
    assert len(lines) == 3 and lines[-1] == "interrupted: nothing was committed", err
    for line, path in zip(lines, ("/", "/table/d.ev"), strict=False):
        assert line.startswith(f"versioned ui: {path}: the catalog "), err
        assert "could not be reached" in line
    assert out == ""


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["--warehouse", str(tmp_path / "wh"), "ui", "--port", str(port)]
        )
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "choose another --port" in result.output


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.status == 200
        return answer.read().decode()
