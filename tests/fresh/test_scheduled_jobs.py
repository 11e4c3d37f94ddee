"""Every command as a scheduled job runs it: the installed `versioned` script in a process of
its own, with nothing started (no SparkSession, no JVM, no catalog connection), on each layout.

One warehouse per layout, the commands in sequence (a test a step, in file order): each step
checks its answer against what the earlier steps wrote (a model of the table's rows), not only
the exit code. `make test-fresh` runs the tier; CI runs it in its second lane.

The processes get the environment a cron job or an Airflow task would: no ``VERSIONED_*``,
no ``PYSPARK_*`` or ``SPARK_*`` settings and no JVM options of the test suite's own, so every
command starts Spark (where it needs it) exactly as a user's command does. The first step is
the README's set-up of such a machine, `versioned init`, which makes Spark's class archive
(in a folder of the tier's, ``VERSIONED_CLASS_ARCHIVE``) that every later command maps. The
commands without an archive are the suite's other console-script tests (tests/cli).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.jvm_processes import JVM_NOTICE, SCRIPT
from tests.support.layout_profiles import LAYOUTS
from versioned.engine.spark.class_archive import ENV_CLASS_ARCHIVE

pytestmark = pytest.mark.fresh

TABLE = "shop.orders"
COPY = "shop.orders_copy"
COLUMNS = ["id", "v", "amount", "p"]


def _job_env(home: Path, classes: Path) -> dict[str, str]:
    """A scheduled job's environment: the machine's (PATH, JAVA_HOME, locale), none of the
    suite's Spark or versioned settings; PYTHONPATH names this checkout so it is what runs.
    ``classes``: where `versioned init` makes the class archive (one for the tier)."""
    dropped = ("VERSIONED_", "PYSPARK_", "SPARK_", "PYTEST_", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["HOME"] = str(home)
    env[ENV_CLASS_ARCHIVE] = str(classes)
    return env


@dataclass
class Warehouse:
    """One layout's warehouse, catalog and model of `TABLE`'s live rows (id -> row)."""

    layout: str
    root: Path
    classes: Path
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    failed: str | None = None

    def run(self, *args: str, user: str = "alice", stdin: str | None = None) -> Run:
        """Run ``versioned --warehouse W --catalog C --user U ARGS`` as a new process."""
        base = ["--warehouse", str(self.root / "wh"), "--catalog", self.catalog, "--user", user]
        proc = subprocess.run(
            [SCRIPT, *base, *args],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=self.root / "cwd",
            env=_job_env(self.root / "home", self.classes),
            timeout=900,
        )
        return Run(args, proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, user: str = "alice", stdin: str | None = None) -> Any:
        """Run a command that must succeed and answer in JSON; the parsed answer."""
        run = self.run(*args, "-o", "json", user=user, stdin=stdin)
        run.check()
        return json.loads(run.stdout)

    @property
    def catalog(self) -> str:
        return f"sqlite:///{self.root / 'catalog.db'}"

    def live(self, table: str = TABLE, user: str = "alice") -> dict[int, dict[str, Any]]:
        """The table's rows, read by `show` in a new process, by id."""
        shown = self.ok("show", table, "--limit", "0", user=user)
        return {row["id"]: row for row in shown}

    def expected(self) -> dict[int, dict[str, Any]]:
        return {k: dict(v) for k, v in self.rows.items()}


@dataclass
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def check(self) -> None:
        assert self.code == 0, f"versioned {' '.join(self.args)} exited {self.code}:\n{self.stderr}"
        assert "Traceback" not in self.stderr, self.stderr

    def one_error_line(self) -> str:
        assert "Traceback" not in self.stderr, self.stderr
        lines = [x for x in self.stderr.splitlines() if x.strip() and JVM_NOTICE not in x]
        assert len(lines) == 1 and lines[0].startswith("Error: "), self.stderr
        return lines[0]


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tier's class archive folder: the first layout's `versioned init` makes it."""
    return tmp_path_factory.mktemp("class-archive")


@pytest.fixture(scope="module", params=LAYOUTS)
def wh(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, classes: Path
) -> Warehouse:
    root = tmp_path_factory.mktemp(f"fresh-{request.param}")
    for sub in ("cwd", "home", "feeds"):
        (root / sub).mkdir()
    return Warehouse(request.param, root, classes)


@pytest.fixture(autouse=True)
def _in_order(wh: Warehouse, request: pytest.FixtureRequest) -> Iterator[None]:
    """The steps build on each other: after a failed one, the rest of its layout's steps are
    skipped, naming the step that failed (its failure is the run's)."""
    if wh.failed is not None:
        pytest.skip(f"an earlier step of the {wh.layout} layout failed: {wh.failed}")
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        wh.failed = request.node.name


def _row(id_: int, v: str, amount: float, p: str) -> dict[str, Any]:
    return {"id": id_, "v": v, "amount": amount, "p": p}


def _csv(path: Path, header: str, lines: list[str]) -> str:
    path.write_text("\n".join([header, *lines]) + "\n")
    return str(path)


def _apply(wh: Warehouse, op: str, row: dict[str, Any]) -> None:
    if op == "D":
        wh.rows.pop(row["id"], None)
    else:
        wh.rows[row["id"]] = {c: row[c] for c in COLUMNS}


def test_init_makes_the_catalog_and_the_class_archive(wh: Warehouse) -> None:
    """As the README asks of a machine that runs scheduled jobs: every later command maps
    the archive (the first layout's init makes it, the second finds it)."""
    run = wh.run("init")
    run.check()
    said = dict(line.split(None, 1) for line in run.stdout.splitlines())
    assert said["catalog"] == wh.catalog and said["user"] == "alice"
    archive = Path(said["classes"])
    assert archive.parent == wh.classes and archive.stat().st_size > 0
    assert (wh.root / "catalog.db").is_file()
    assert list((wh.root / "cwd").iterdir()) == []  # nothing of the probe's lands here


def test_create_table_and_describe(wh: Warehouse) -> None:
    created = wh.run(
        "create-table", TABLE, "--columns", "id BIGINT, v STRING, amount DOUBLE, p STRING",
        "--primary-key", "id", "--partition-by", "p", "--op-code-column", "op",
        "--layout", wh.layout,
    )  # fmt: skip
    created.check()
    assert TABLE in created.stdout and wh.layout in created.stdout
    described = wh.ok("describe", TABLE)
    assert described["layout"] == wh.layout
    assert described["primary_key"] == ["id"] and described["partition_by"] == ["p"]
    columns = [c["name"] for c in described["columns"]]
    assert columns == COLUMNS


def test_upsert_csv(wh: Warehouse) -> None:
    rows = [_row(1, "a", 1.0, "x"), _row(2, "b", 2.0, "x"), _row(3, "c", 3.0, "y")]
    rows.append(_row(4, "d", 4.0, "y"))
    feed = _csv(
        wh.root / "feeds" / "first.csv",
        "op,id,v,amount,p",
        [f"I,{r['id']},{r['v']},{r['amount']},{r['p']}" for r in rows],
    )
    result = wh.ok("upsert", TABLE, feed, "-q")
    assert (result["inserted"], result["updated"], result["deleted"]) == (4, 0, 0)
    assert result["rejected"] == 0
    for r in rows:
        _apply(wh, "I", r)
    wh.versions["csv"] = result["version"]


def test_upsert_json(wh: Warehouse) -> None:
    changes = [("U", _row(1, "a2", 1.5, "x")), ("D", _row(2, "b", 2.0, "x"))]
    changes.append(("I", _row(5, "e", 5.0, "y")))
    feed = wh.root / "feeds" / "second.json"
    feed.write_text("".join(json.dumps({"op": op, **row}) + "\n" for op, row in changes))
    result = wh.ok("upsert", TABLE, str(feed), "--format", "json", "-q")
    assert (result["inserted"], result["updated"], result["deleted"]) == (1, 1, 1)
    for op, row in changes:
        _apply(wh, op, row)
    wh.versions["json"] = result["version"]


def test_upsert_parquet_moves_a_key_to_another_partition(wh: Warehouse) -> None:
    changes = [("U", _row(3, "c2", 3.5, "x")), ("I", _row(6, "f", 6.0, "z"))]
    feed = wh.root / "feeds" / "third.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [{"op": op, **row} for op, row in changes],
            schema=pa.schema(
                [("op", pa.string()), ("id", pa.int64()), ("v", pa.string()),
                 ("amount", pa.float64()), ("p", pa.string())]
            ),
        ),
        feed,
    )  # fmt: skip
    result = wh.ok("upsert", TABLE, str(feed), "-q")
    assert (result["inserted"], result["updated"], result["deleted"]) == (1, 1, 0)
    for op, row in changes:
        _apply(wh, op, row)
    wh.versions["parquet"] = result["version"]


def test_show_reads_what_was_written(wh: Warehouse) -> None:
    assert wh.live() == wh.expected()


def test_show_as_of_an_earlier_version(wh: Warehouse) -> None:
    shown = wh.ok("show", TABLE, "--limit", "0", "--as-of", str(wh.versions["csv"]))
    assert sorted(r["id"] for r in shown) == [1, 2, 3, 4]
    assert {r["id"]: r["v"] for r in shown}[1] == "a"


def test_sql(wh: Warehouse) -> None:
    answer = wh.ok("sql", f"SELECT p, count(*) AS n, sum(amount) AS total FROM {TABLE} GROUP BY p")
    expected: dict[str, list[float]] = {}
    for row in wh.rows.values():
        expected.setdefault(row["p"], []).append(row["amount"])
    assert {r["p"]: (r["n"], r["total"]) for r in answer} == {
        p: (len(a), sum(a)) for p, a in expected.items()
    }


def test_history(wh: Warehouse) -> None:
    history = wh.ok("history", TABLE)
    by_version = {h["version"]: h for h in history}
    assert set(wh.versions.values()) <= set(by_version)
    counts = {
        name: (by_version[v]["inserted"], by_version[v]["updated"], by_version[v]["deleted"])
        for name, v in wh.versions.items()
    }
    assert counts == {"csv": (4, 0, 0), "json": (1, 1, 1), "parquet": (1, 1, 0)}


def test_changes_since_the_first_upsert(wh: Warehouse) -> None:
    changes = wh.ok("changes", TABLE, "--since", str(wh.versions["csv"]), "--limit", "0")
    net = {c["id"]: c["_change"] for c in changes}
    assert net == {1: "update", 2: "delete", 3: "update", 5: "insert", 6: "insert"}
    assert {c["id"]: c["p"] for c in changes if c["_change"] != "delete"}[3] == "x"


def test_delete_by_condition(wh: Warehouse) -> None:
    result = wh.ok("delete", TABLE, "--where", "amount >= 4 AND amount < 5", "-q")
    assert result["deleted"] == 1
    wh.rows.pop(4)
    wh.versions["delete"] = result["version"]
    assert wh.live() == wh.expected()


def _holding(wh: Warehouse) -> dict[str, int]:
    """Live rows per partition value, by the model."""
    holding: dict[str, int] = {}
    for row in wh.rows.values():
        holding[row["p"]] = holding.get(row["p"], 0) + 1
    return holding


def test_partitions(wh: Warehouse) -> None:
    listed = {p["p"]: p for p in wh.ok("partitions", TABLE)}
    holding = _holding(wh)
    assert set(holding) <= set(listed)
    for value in holding:
        assert listed[value]["data_files"] >= 1, listed[value]
        assert listed[value]["head_version"] == wh.versions["delete"] or value not in ("y",)


def test_partitions_metadata_table(wh: Warehouse) -> None:
    rows = wh.ok("sql", f"SELECT * FROM {TABLE}__partitions")
    estimates = {r["values"]["p"]: r["live_rows_estimate"] for r in rows}
    for value, count in _holding(wh).items():
        if wh.layout == "acid":  # documented exact for acid
            assert estimates[value] == count, rows
        else:  # an estimate that never calls a partition holding rows empty
            assert estimates[value] >= 1, rows


@pytest.mark.parametrize("kind", ["minor", "major", None])
def test_compact(wh: Warehouse, kind: str | None) -> None:
    args = ["compact", TABLE, "-q"] + (["--kind", kind] if kind else [])
    if kind is not None and wh.layout != "acid":
        refused = wh.run(*args)  # a usage error: click's usage lines, then ours
        assert refused.code == 2, refused.stderr
        assert "Traceback" not in refused.stderr
        assert refused.stderr.strip().splitlines()[-1] == (
            f"Error: --kind applies to acid tables; {TABLE} uses the versioned layout"
        )
        return
    # A change first, so that every kind of compaction has a delta to merge.
    amount = wh.rows[6]["amount"] + 1
    feed = _csv(wh.root / "feeds" / f"before-{kind}.csv", "op,id,v,amount,p", [f"U,6,f,{amount},z"])
    assert wh.ok("upsert", TABLE, feed, "-q")["updated"] == 1
    _apply(wh, "U", _row(6, "f", amount, "z"))
    compacted = wh.ok(*args)
    assert {c["status"] for c in compacted} == {"compacted"}, compacted
    assert {c["partition"] for c in compacted} >= {"p=z"}
    assert wh.live() == wh.expected()


def test_vacuum(wh: Warehouse) -> None:
    dry = wh.ok("vacuum", TABLE, "--retain-hours", "0", "--grace-hours", "0", "--dry-run", "-q")
    result = wh.ok("vacuum", TABLE, "--retain-hours", "0", "--grace-hours", "0", "-q")
    assert result["retired_files"] >= 1, "compaction left replaced files for vacuum"
    assert result["retired_files"] == dry["retired_files"]
    location = wh.root / "wh" / "shop.db" / "orders"
    assert not [path for path in dry["paths"] if (location / path).exists()]
    assert wh.live() == wh.expected()


def test_export_then_import_into_another_table(wh: Warehouse) -> None:
    dest = wh.root / "exported"
    exported = wh.ok("export", TABLE, str(dest))
    assert exported["rows"] == len(wh.rows)
    assert (dest / "_versioned_collection.json").is_file()
    imported = wh.ok("import", str(dest), "--table", COPY)
    assert imported["created"] and imported["rows"] == len(wh.rows)
    assert wh.live(COPY) == wh.expected()


def test_stream_from_stdin(wh: Warehouse) -> None:
    lines = "7,g,7.0\n1,a3,1.25\n"
    summary = wh.ok(
        "stream", TABLE, "--partition", "p=x", "--fields", "id,v,amount", "-q", stdin=lines
    )
    assert summary["records"] == 2 and summary["rejected"] == 0
    _apply(wh, "I", _row(7, "g", 7.0, "x"))
    _apply(wh, "U", _row(1, "a3", 1.25, "x"))
    assert wh.live() == wh.expected()


def test_alter_table_adds_a_column_that_upserts_then_fill(wh: Warehouse) -> None:
    wh.ok("alter-table", TABLE, "--add-columns", "note STRING")
    described = wh.ok("describe", TABLE)
    assert [c["name"] for c in described["columns"]][-1] == "note"
    feed = _csv(wh.root / "feeds" / "note.csv", "op,id,v,amount,p,note", ["U,5,e,5.0,y,late"])
    result = wh.ok("upsert", TABLE, feed, "-q")
    assert result["updated"] == 1
    shown = wh.live()
    assert shown[5]["note"] == "late"
    assert all(row["note"] is None for key, row in shown.items() if key != 5)
    assert {k: {c: r[c] for c in COLUMNS} for k, r in shown.items()} == wh.expected()
    for key, row in wh.rows.items():  # the model now has the column the table has
        row["note"] = "late" if key == 5 else None


def test_grants(wh: Warehouse) -> None:
    denied = wh.run("show", TABLE, user="bob")
    assert denied.code == 77, denied.stderr
    assert "bob" in denied.one_error_line()
    wh.run("grant", "read", TABLE, "bob").check()
    grants = wh.ok("grants", TABLE)
    assert {(g["principal"], g["privilege"]) for g in grants} >= {("bob", "read")}
    assert set(wh.live(user="bob")) == set(wh.rows)
    refused = wh.run("upsert", TABLE, str(wh.root / "feeds" / "first.csv"), "-q", user="bob")
    assert refused.code == 77, refused.stderr
    wh.run("revoke", "read", TABLE, "bob").check()
    assert wh.run("show", TABLE, user="bob").code == 77


def test_drop_table(wh: Warehouse) -> None:
    before = {t["table"] for t in wh.ok("list-tables")}
    assert {TABLE, COPY} <= before
    wh.run("drop-table", COPY, "--yes").check()
    after = {t["table"] for t in wh.ok("list-tables")}
    assert after == before - {COPY}
    assert not any((wh.root / "wh").glob("shop.db/orders_copy/*"))
    assert wh.live() == wh.expected()  # the other table is untouched
