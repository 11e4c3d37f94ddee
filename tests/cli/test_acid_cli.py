"""The acid layout through the CLI: `create-table --layout acid --bucket-by --buckets`, upserts of
CSV and JSON feeds, show / history / changes / delete / partitions / describe, and one-line
refusals (exit 2) of definitions the layout cannot store and of operations it lacks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result

from tests.support.jvm_processes import JVM_NOTICE
from versioned.cli.main import cli
from versioned.layouts.acid.bucket_codec import decode_bucket_property
from versioned.layouts.acid.bucket_hash import bucket_ids

SCRIPT = str(Path(sys.executable).parent / "versioned")
PROGRESS = re.compile(r"^\[ *\d+\.\ds\] \S")
COLUMNS = "id BIGINT, customer STRING, amount DOUBLE, region STRING"
ACID = ["--columns", COLUMNS, "--primary-key", "id", "--op-code-column", "op", "--layout", "acid"]
BUCKETED = [*ACID, "--bucket-by", "id", "--buckets", "4"]
FIRST = "id,customer,amount,region,op\n1,ann,10.5,north,I\n2,bob,20.0,south,I\n3,cy,30.0,north,I\n"
FIRST += "4,dee,40.0,east,I\n"
FIRST_SHOWN = sorted(line.rsplit(",", 1)[0] for line in FIRST.splitlines()[1:])
"""`show -o csv` rows after FIRST: the feed without its op codes."""
SECOND = [  # an update, a delete (key and op code only), an insert, and a row that cannot land
    {"id": 2, "customer": "bob", "amount": 25.0, "region": "south", "op": "U"},
    {"id": 3, "op": "D"},
    {"id": 5, "customer": "eve", "amount": 50.0, "region": "west", "op": "insert"},
    {"id": 6, "customer": "fay", "amount": "lots", "region": "west", "op": "I"},
]


@pytest.fixture
def base(tmp_path: Path) -> list[str]:
    """Global options of a fresh catalog and warehouse."""
    return ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]


def _cli(base: list[str], *args: str) -> Result:
    return CliRunner().invoke(cli, [*base, "--user", "alice", *args])


def _ok(base: list[str], *args: str) -> Result:
    result = _cli(base, *args)
    assert result.exit_code == 0, result.output
    return result


def _json(base: list[str], *args: str) -> Any:
    return json.loads(_ok(base, *args, "-o", "json").stdout)


def _script(base: list[str], cwd: Path, *args: str, no_spark: bool = False):
    """The installed console script in a child process (PYTHONPATH inherited)."""
    env = {k: v for k, v in os.environ.items() if k != "VERSIONED_LOG_LEVEL"}
    if no_spark:
        env["SPARK_HOME"] = str(cwd / "no-spark-here")  # starting Spark would fail
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [SCRIPT, *base, "--user", "alice", "--spark-master", "local[1]", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=900,
    )


def _one_error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith(JVM_NOTICE)]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    return lines[0]


def _hive_bucket(key: int) -> int:
    return int(bucket_ids(pa.table({"id": pa.array([key], pa.int64())}), ["id"], ["BIGINT"], 4)[0])


def test_create_table_acid_describes_its_layout_format_and_hive_bucketing(base: list[str]) -> None:
    created = _ok(base, "create-table", "shop.orders", *BUCKETED)
    assert created.stdout == "created shop.orders (acid layout, orc)\n"
    assert created.stderr == ""
    info = _json(base, "describe", "shop.orders")
    assert (info["layout"], info["file_format"]) == ("acid", "orc")
    assert (info["bucket_by"], info["buckets"], info["bucketing_version"]) == (["id"], 4, 2)
    assert info["key_lookup"].startswith("the key's bucket only")
    text = _ok(base, "describe", "shop.orders").stdout
    assert re.search(r"^bucketing_version +2$", text, re.M), text
    assert re.search(r"^id +BIGINT +yes +primary key, bucket$", text, re.M), text
    (row,) = _json(base, "list-tables")
    assert (row["layout"], row["format"]) == ("acid", "orc")


def test_bucket_columns_outside_the_key_are_allowed_and_lookups_read_every_bucket(
    base: list[str],
) -> None:
    """Hive lets any non-partition columns be bucket columns; only a key that holds them all
    tells which bucket file has its row."""
    _ok(base, "create-table", "shop.orders", *ACID, "--bucket-by", "region", "--buckets", "8",
        "--property", "bucketing_version=1")  # fmt: skip
    info = _json(base, "describe", "shop.orders")
    assert (info["bucket_by"], info["bucketing_version"]) == (["region"], 1)
    assert info["key_lookup"].startswith("every bucket: bucket column region is not part")
    _ok(base, "create-table", "shop.plain", *ACID)
    assert _json(base, "describe", "shop.plain")["key_lookup"].startswith("bucket 0")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--buckets", "4"], "--buckets needs --bucket-by"),
        (["--bucket-by", "zz", "--buckets", "4"], "bucket column zz not among the columns"),
        (["--bucket-by", "id", "--buckets", "0"], "--buckets 0: the number of buckets must be"),
        (["--bucket-by", "id", "--buckets", "5000"], "between 1 and 4096"),
        (["--bucket-by", "id"], "--bucket-by needs --buckets N"),
        (["--bucket-by", "id,id", "--buckets", "2"], "bucket column is listed twice"),
        (["--bucket-by", "region", "--buckets", "2", "--partition-by", "region"],
         "both a partition and a bucket column"),
        (["--format", "parquet"], "stores orc files, not parquet; use --format orc"),
        (["--bucket-by", "price", "--buckets", "2"], "DECIMAL(10,2) column cannot be a bucket"),
        (["--sort-by", "amount"], "the acid layout cannot sort its files"),
        (["--bucket-by", "id", "--buckets", "2", "--property", "bucketing_version=3"],
         "bucketing_version='3' of shop.orders must be 1 or 2"),
        # the last --columns wins: a partition column named like the ACID field `bucket`
        (["--columns", f"{COLUMNS}, Bucket STRING", "--partition-by", "Bucket"],
         "partition column(s) bucket of shop.orders share a name with the ACID event fields"),
    ],
    ids=["buckets-alone", "unknown-column", "zero", "too-many", "bucket-by-alone", "twice",
         "partition-column", "parquet", "decimal", "sorted", "bucketing-version",
         "acid-field-name"],
)  # fmt: skip
def test_a_definition_acid_cannot_store_is_one_line_exit_2_and_creates_nothing(
    base: list[str], tmp_path: Path, args: list[str], message: str
) -> None:
    columns = f"{COLUMNS}, price DECIMAL(10,2)"
    proc = _script(
        base,
        tmp_path / "cwd",
        "create-table", "shop.orders", *ACID, "--columns", columns, *args,
        no_spark=True,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert message in _one_error_line(proc.stderr)
    assert proc.stdout == ""
    assert _json(base, "list-tables") == []


def test_alter_table_of_an_acid_table_is_one_catalog_commit_without_spark(
    base: list[str], tmp_path: Path
) -> None:
    columns = COLUMNS.replace("id BIGINT", "id INT")
    _ok(base, "create-table", "shop.orders", *BUCKETED, "--columns", columns)  # the last wins
    proc = _script(
        base, tmp_path / "cwd", "alter-table", "shop.orders", "--add-columns", "note STRING",
        no_spark=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [h["operation"] for h in _json(base, "history", "shop.orders")] == ["alter"]
    columns = _json(base, "describe", "shop.orders")["columns"]
    assert [(c["name"], c["type"]) for c in columns][-2:] == [
        ("region", "STRING"),
        ("note", "STRING"),
    ]
    # The bucket column's hash would change with its type: refused in one line.
    proc = _script(
        base, tmp_path / "cwd", "alter-table", "shop.orders", "--widen", "id BIGINT",
        no_spark=True,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "cannot change the type of bucket column id" in _one_error_line(proc.stderr)
    assert [h["operation"] for h in _json(base, "history", "shop.orders")] == ["alter"]


def test_acid_table_end_to_end_through_the_cli(spark: Any, base: list[str], tmp_path: Path) -> None:
    _ok(base, "create-table", "shop.orders", *BUCKETED)
    first = tmp_path / "first.csv"
    first.write_text(FIRST)
    done = _ok(base, "upsert", "shop.orders", str(first), "-o", "json")
    one = json.loads(done.stdout)
    assert (one["inserted"], one["updated"], one["deleted"], one["rejected"]) == (4, 0, 0, 0)
    lines = done.stderr.splitlines()
    assert lines and all(PROGRESS.match(x) for x in lines), done.stderr
    second = tmp_path / "second.json"
    second.write_text("".join(json.dumps(r) + "\n" for r in SECOND))
    two = _json(base, "upsert", "shop.orders", str(second), "-q")
    assert (two["inserted"], two["updated"], two["deleted"], two["rejected"]) == (1, 1, 1, 1)
    dead = tmp_path / "wh" / "shop.db" / "orders" / "_dead_letter"
    assert "lots" in "".join(p.read_text() for p in dead.rglob("*.json"))

    rows = {r["id"]: (r["customer"], r["amount"]) for r in _json(base, "show", "shop.orders")}
    assert rows == {1: ("ann", 10.5), 2: ("bob", 25.0), 4: ("dee", 40.0), 5: ("eve", 50.0)}
    old = _ok(base, "show", "shop.orders", "--as-of", str(one["version"]), "-o", "csv").stdout
    assert old.splitlines()[0] == "id,customer,amount,region"
    assert sorted(old.splitlines()[1:]) == FIRST_SHOWN
    history = _json(base, "history", "shop.orders")
    assert [(h["version"], h["operation"], h["rejected"]) for h in history] == [
        (one["version"], "upsert", 0),
        (two["version"], "upsert", 1),
    ]
    changed = _json(base, "changes", "shop.orders", "--since", str(one["version"]))
    assert sorted((r["_change"], r["id"], r["customer"]) for r in changed) == [
        ("delete", 3, "cy"),
        ("insert", 5, "eve"),
        ("update", 2, "bob"),
    ]
    gone = _json(base, "delete", "shop.orders", "--where", "region = 'east'", "-q")
    assert (gone["deleted"], gone["version"] > two["version"]) == (1, True)
    assert sorted(r["id"] for r in _json(base, "show", "shop.orders")) == [1, 2, 5]

    (part,) = _json(base, "partitions", "shop.orders")
    # 4 + 2 insert events in delta files; delete events: update of 2, delete of 3 and of 4
    assert (part["rows"], part["delete_events"], part["versions"]) == (6, 3, 2)
    info = _json(base, "describe", "shop.orders")
    assert (info["current_version"], info["commits"]) == (gone["version"], 3)
    _assert_rows_sit_in_hive_buckets(tmp_path / "wh" / "shop.db" / "orders")


def _assert_rows_sit_in_hive_buckets(table_dir: Path) -> None:
    """Every event is in the bucket file its bucket property names, and an insert event's
    bucket is the one Hive's hash gives its key."""
    from versioned.layouts.acid.orc_files import read_bucket_file

    files = sorted(table_dir.glob("*delta_*/bucket_*"))
    assert any(f.parent.name.startswith("delete_delta_") for f in files), files
    for path in files:
        for event in read_bucket_file(path.read_bytes()).events.to_pylist():
            bucket = decode_bucket_property(event["bucket"]).bucket_id
            assert int(path.name.removeprefix("bucket_")) == bucket, path
            if event["row"] is not None:
                assert bucket == _hive_bucket(event["row"]["id"]), (path, event)


def test_stdout_holds_only_the_answer_and_stderr_only_progress(
    spark: Any, base: list[str], tmp_path: Path
) -> None:
    """In-process on the shared session (the real script's own JVM start, kept off stderr and
    out of the working directory, is .ci/wheel-smoke.sh's)."""
    _ok(base, "create-table", "shop.orders", *BUCKETED)
    feed = tmp_path / "first.csv"
    feed.write_text(FIRST)
    upsert = _ok(base, "upsert", "shop.orders", str(feed), "-o", "json")
    assert json.loads(upsert.stdout)["inserted"] == 4
    lines = upsert.stderr.splitlines()
    assert lines and all(PROGRESS.match(x) for x in lines), upsert.stderr
    show = _ok(base, "show", "shop.orders", "-o", "csv")
    header, *rows = show.stdout.splitlines()
    assert (header, sorted(rows)) == ("id,customer,amount,region", FIRST_SHOWN)
    assert show.stderr == ""
