"""`versioned stream`: records piped into acid and versioned tables, commits by count and by
time (also while the input stays open), bad records, dead letters, SIGINT/SIGTERM, one-line
errors, and stdout carrying only the summary."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support.layout_profiles import LAYOUTS, table_args
from versioned.cli.line_source import LineReader, split_lines
from versioned.cli.main import cli

SCRIPT = str(Path(sys.executable).parent / "versioned")
TABLE = "logs.events"
DAY = ["--partition", "day=2024-01-01"]


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _events(cat: Any, layout: str = "versioned", partition_by: str | None = "day") -> Any:
    extra = table_args(layout, buckets=2)
    return cat.create_table(
        TABLE,
        columns="id BIGINT NOT NULL, level STRING, msg STRING, day STRING",
        primary_key="id",
        partition_by=partition_by,
        layout=layout,
        **extra,
    )


def _base(cat: Any) -> list[str]:
    settings = cat.settings
    return ["--warehouse", settings.warehouse, "--catalog", settings.catalog_url, "--user", "alice"]


def _stream(cat: Any, *args: str, stdin: str = "") -> Result:
    return CliRunner().invoke(cli, [*_base(cat), "stream", TABLE, *args], input=stdin)


def _rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((r.id, r.level, r.msg, r.day) for r in table.read().collect())


def _stream_commits(table: Any) -> int:
    return sum(1 for c in table.history() if c.operation == "stream")


def _wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 120  # a bound against hanging, not a timing assertion
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.1)


def _spawn(cat: Any, tmp_path: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SCRIPT, *_base(cat), "-o", "json", "stream", TABLE, *args],
        stdin=subprocess.PIPE,
        stdout=(tmp_path / "out").open("wb"),
        stderr=(tmp_path / "err").open("wb"),
    )


def test_delimited_records_from_files_and_stdin_land_in_the_table(
    cat: Any, layout: str, tmp_path: Path
) -> None:
    table = _events(cat, layout)
    first, last = tmp_path / "first.csv", tmp_path / "last.csv"
    first.write_text("1,x,hello\r\n2,x,streaming\n")
    last.write_text("\n5,x,last line without a newline")
    stdin = "3,x,from stdin\n4,x,\n"
    args = [*DAY, "--fields", "id,,msg", "--create-partition", "-o", "json"]
    result = _stream(cat, *args, str(first), "-", str(last), stdin=stdin)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # stdout holds the summary and nothing else
    assert summary | {"seconds": 0, "records_per_s": 0} == {
        "table": TABLE,
        "partition": "day=2024-01-01",
        "status": "end of input",
        "records": 5,
        "rejected": 0,
        "transactions": 1,
        "batches": 1,
        "seconds": 0,
        "records_per_s": 0,
    }
    day = "2024-01-01"
    assert _rows(table) == [
        (1, None, "hello", day),
        (2, None, "streaming", day),
        (3, None, "from stdin", day),
        (4, None, None, day),
        (5, None, "last line without a newline", day),
    ]
    assert "5 records read, 5 committed in 1 transaction(s)" in result.stderr


def test_commit_every_n_records_commits_every_n_in_batches_of_t(cat: Any, layout: str) -> None:
    table = _events(cat, layout)
    stdin = "".join(f"{i},INFO,m{i}\n" for i in range(7))
    args = [*DAY, "--create-partition", "--commit-every", "3", "--batch-size", "2", "-o", "json"]
    result = _stream(cat, *args, stdin=stdin)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["records"], summary["transactions"], summary["batches"]) == (7, 3, 2)
    assert _stream_commits(table) == 3
    assert [r[0] for r in _rows(table)] == list(range(7))


def test_json_records_stream_with_unknown_keys_ignored(cat: Any) -> None:
    table = _events(cat, "acid")
    stdin = '{"id": 1, "level": "INFO", "msg": "a", "host": "h1"}\n{"ID": 2, "msg": "b"}\n'
    args = [*DAY, "--create-partition", "--format", "json", "--ignore-unknown", "-q"]
    result = _stream(cat, *args, stdin=stdin)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert _rows(table) == [(1, "INFO", "a", "2024-01-01"), (2, None, "b", "2024-01-01")]


def test_regex_records_map_groups_to_columns_of_an_unpartitioned_table(cat: Any) -> None:
    table = _events(cat, partition_by=None)
    args = ["--format", "regex", "--regex", r"(\d+) \[(\w+)\] (.*?)(?: @(\S+))?", "-q"]
    result = _stream(cat, *args, stdin="7 [WARN] disk [sda] 91% full @d2\n8 [INFO] ok\n")
    assert result.exit_code == 0, result.output
    assert _rows(table) == [(7, "WARN", "disk [sda] 91% full", "d2"), (8, "INFO", "ok", None)]


def test_commit_seconds_commits_while_the_input_stays_open(
    cat: Any, layout: str, tmp_path: Path
) -> None:
    table = _events(cat, layout)
    args = [*DAY, "--create-partition", "--commit-seconds", "0.5"]
    proc = _spawn(cat, tmp_path, *args)
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"1,INFO,first\n2,INFO,second\n")
        proc.stdin.flush()
        _wait_for(lambda: _stream_commits(table) > 0, "a commit of the quiet input")
        assert proc.poll() is None  # stdin is still open: the commit came from the clock
        assert [r[0] for r in _rows(table)] == [1, 2]
        proc.stdin.write(b"3,INFO,third\n")
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
    assert proc.returncode == 0, (tmp_path / "err").read_text()
    summary = json.loads((tmp_path / "out").read_text())
    assert (summary["records"], summary["status"]) == (3, "end of input")
    assert [r[0] for r in _rows(table)] == [1, 2, 3]


def test_an_idle_stream_closes_its_batch_after_batch_seconds(cat: Any, tmp_path: Path) -> None:
    table = _events(cat, "acid")  # closing an acid batch commits its files' final lengths
    args = [*DAY, "--create-partition", "--commit-seconds", "0.2", "--batch-seconds", "0.5"]
    proc = _spawn(cat, tmp_path, *args)
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"1,INFO,first\n")
        proc.stdin.flush()
        closed = lambda: any(c.operation == "stream_close" for c in table.history())  # noqa: E731
        _wait_for(closed, "the idle batch to be closed")
        assert proc.poll() is None
        proc.stdin.write(b"2,INFO,second\n")
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
    assert proc.returncode == 0, (tmp_path / "err").read_text()
    summary = json.loads((tmp_path / "out").read_text())
    assert (summary["records"], summary["transactions"], summary["batches"]) == (2, 2, 2)
    assert [r[0] for r in _rows(table)] == [1, 2]


def _streaming_uncommitted(
    cat: Any, tmp_path: Path, data: bytes, *, read: int
) -> subprocess.Popen[bytes]:
    """A stream into ``day=2024-01-01`` that commits only when stopped, fed ``data``, once
    it read ``read`` records."""
    proc = _spawn(cat, tmp_path, *DAY, "--create-partition", "--commit-seconds", "3600")
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()
    err = tmp_path / "err"
    _wait_for(lambda: f"{read} records read" in err.read_text(), "the records to be read")
    return proc


@pytest.mark.parametrize(
    ("signum", "code", "layout"),
    [(signal.SIGINT, 130, "acid"), (signal.SIGTERM, 143, "versioned")],
)
def test_a_signal_commits_what_was_read_and_exits_cleanly(
    cat: Any, tmp_path: Path, signum: int, code: int, layout: str
) -> None:
    table = _events(cat, layout)
    lines = b"1,INFO,a\n2,INFO,b\n3,INFO,c\n4,INFO,not a whole line yet"
    proc = _streaming_uncommitted(cat, tmp_path, lines, read=3)
    assert proc.stdin is not None
    err = tmp_path / "err"
    try:
        assert _stream_commits(table) == 0
        proc.send_signal(signum)
        proc.wait(timeout=120)
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err.read_text()
    assert "Traceback" not in err.read_text()
    assert "incomplete last line" in err.read_text()
    summary = json.loads((tmp_path / "out").read_text())
    assert (summary["status"], summary["records"], summary["transactions"]) == (
        "interrupted",
        3,
        1,
    )
    assert [r[0] for r in _rows(table)] == [1, 2, 3]
    assert _stream_commits(table) == 1


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_the_input_ends_is_reported_as_an_interruption(
    lake: Any, tmp_path: Path, signum: int
) -> None:
    """Ctrl-C on a terminal also ends the command feeding the pipe: the end of input that
    follows the signal at once must not turn the stream's status into `end of input`."""
    table = _events(lake)
    proc = _streaming_uncommitted(lake, tmp_path, b"1,INFO,a\n2,INFO,b\n", read=2)
    assert proc.stdin is not None
    err = tmp_path / "err"
    try:
        proc.send_signal(signum)
        proc.stdin.close()  # what the dying producer does
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, err.read_text()
    summary = json.loads((tmp_path / "out").read_text())
    assert (summary["status"], summary["records"]) == ("interrupted", 2)
    version = table.history()[-1].version
    last = err.read_text().splitlines()[-1]
    assert last == f"interrupted after version {version} of {TABLE} was committed"


def test_a_bad_record_aborts_its_transaction_and_exits_2_naming_the_line(
    cat: Any, tmp_path: Path
) -> None:
    table = _events(cat)
    feed = tmp_path / "in.csv"
    feed.write_text("1,INFO,a\n2,INFO,b\n3,INFO,c\nnot-a-number,INFO,d\n5,INFO,e\n")
    result = _stream(
        cat, *DAY, "--create-partition", "--commit-every", "2", "-q", "-o", "json", str(feed)
    )
    assert result.exit_code == 2
    error = result.stderr.strip()
    assert "\n" not in error and error.startswith("Error: "), result.stderr
    assert f"{feed} line 4: column id: 'not-a-number' is not a BIGINT" in error
    assert f"Nothing from {feed} line 3 on was committed" in error
    summary = json.loads(result.stdout)
    assert (summary["status"], summary["records"], summary["transactions"]) == ("failed", 2, 1)
    assert [r[0] for r in _rows(table)] == [1, 2]


def test_dead_letter_sets_bad_records_aside_and_streams_on(cat: Any, tmp_path: Path) -> None:
    table = _events(cat)
    stdin = "1,INFO,a\nnot-a-number,INFO,b\n3,INFO,c\n"
    result = _stream(cat, *DAY, "--create-partition", "--dead-letter", "-o", "json", stdin=stdin)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["records"], summary["rejected"]) == (2, 1)
    assert [r[0] for r in _rows(table)] == [1, 3]
    dead = sorted((Path(cat.settings.warehouse) / "logs.db").rglob("_dead_letter/**/*.json"))
    letters = [json.loads(line) for path in dead for line in path.read_text().splitlines()]
    assert letters == [
        {
            "_raw": "not-a-number,INFO,b",
            "_reason": "column id: 'not-a-number' is not a BIGINT",
            "_source": "stream:versioned-stream:<stdin>:2",
        }
    ]
    (commit,) = [c for c in table.history() if c.operation == "stream"]
    assert commit.metrics["rejected"] == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--table", "logs.nope"], 3, "no table logs.nope"),
        ([], 2, "table logs.events is partitioned by (day): give --partition day=..."),
        (["--partition", "dy=1"], 2, "'dy=1' lacks day and names dy (no such partition column)"),
        (["--partition", "day"], 2, "partition item 'day' is not key=value"),
        (["--partition", "day=2099"], 2, "no partition day=2099: pass --create-partition"),
        ([*DAY, "--fields", "id,nope"], 2, "names column 'nope', which table logs.events"),
        ([*DAY, "--format", "regex"], 2, "--format regex needs --regex PATTERN"),
        ([*DAY, "--format", "json", "--fields", "id"], 2, "--fields applies to --format delimited"),
        ([*DAY, str(Path("/no/such/file.csv"))], 2, "input file /no/such/file.csv does not exist"),
    ],
)
def test_bad_tables_partitions_and_options_fail_in_one_line(
    cat: Any, args: list[str], code: int, message: str
) -> None:
    table = _events(cat)
    name = TABLE
    if args[:1] == ["--table"]:
        name, args = args[1], args[2:]
    result = CliRunner().invoke(cli, [*_base(cat), "stream", name, *args], input="1,INFO,a\n")
    assert result.exit_code == code, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert result.stdout == ""
    assert _stream_commits(table) == 0


def test_an_unpartitioned_table_refuses_a_partition_spec(cat: Any) -> None:
    _events(cat, partition_by=None)
    result = _stream(cat, *DAY, stdin="1,INFO,a\n")
    assert result.exit_code == 2
    assert "table logs.events is not partitioned: leave out --partition" in result.stderr


def test_lines_lose_their_terminator_only_and_keep_their_numbers() -> None:
    chunk, span = split_lines(b"a, b \r\n\n c\r\r\n", 10, "f")
    assert (chunk.records, list(chunk.numbers), span) == ([b"a, b ", b" c\r"], [10, 12], 3)
    reader = LineReader(["-"], stdin=io.BytesIO(b"x\n\ny\nlast")).start()
    got = []
    while not hasattr(item := reader.get(5.0), "error"):
        got += list(zip(item.numbers, item.records, strict=True))  # type: ignore[union-attr]
    assert got == [(1, b"x"), (3, b"y"), (4, b"last")]


def test_a_stream_without_a_grant_is_told_to_ask_for_write(cat: Any, tmp_path: Path) -> None:
    """Issue 27 item 16: it was told to ask for read (the real script; no Spark starts)."""
    table = _events(cat)
    settings = cat.settings
    base = ["--warehouse", settings.warehouse, "--catalog", settings.catalog_url]
    done = subprocess.run(
        [SCRIPT, *base, "--user", "bob", "stream", TABLE, *DAY],
        input=b"1,INFO,a\n",
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 77, done.stderr
    assert done.stderr.decode().splitlines() == [
        "Error: bob may not write to logs.events: ask its owner (alice) for "
        "`versioned grant write logs.events bob`"
    ]
    assert done.stdout == b""
    assert _stream_commits(table) == 0


def test_four_streams_into_one_table_all_land_however_often_they_race(
    cat: Any, tmp_path: Path
) -> None:
    """Issue 27 item 6: four `versioned stream` processes, one partition each, disjoint
    keys, a table-wide key (every commit conflicts with every other writer's): before,
    writers died after 10 lost races (exit 75) with records they had read. Python only."""
    table = _events(cat)
    settings = cat.settings
    base = ["--warehouse", settings.warehouse, "--catalog", settings.catalog_url]
    procs = []
    for w in range(4):
        lines = "".join(f"{w * 10_000 + i},INFO,m{i}\n" for i in range(400)).encode()
        proc = subprocess.Popen(
            [SCRIPT, *base, "--user", "alice", "-o", "json", "stream", TABLE,
             "--partition", f"day=2024-01-0{w + 1}", "--create-partition",
             "--commit-every", "20"],
            stdin=subprocess.PIPE,
            stdout=(tmp_path / f"out{w}").open("wb"),
            stderr=(tmp_path / f"err{w}").open("wb"),
        )  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(lines)  # all four have their records before any finishes
        proc.stdin.close()
        procs.append(proc)
    for w, proc in enumerate(procs):
        code = proc.wait(timeout=600)
        assert code == 0, (tmp_path / f"err{w}").read_text()[-2000:]
    assert _stream_commits(table) == 4 * 400 // 20
    ids = sorted(r.id for r in table.read().select("id").collect())
    assert ids == sorted(w * 10_000 + i for w in range(4) for i in range(400))
