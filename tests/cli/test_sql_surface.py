"""`Catalog.sql` / `versioned sql`: read-only queries over tables the user may read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.support.layout_profiles import LAYOUTS
from versioned.errors import InvalidNameError, PermissionDeniedError, QueryError


def _table(cat: Any, name: str, rows: list[tuple[int, str]]) -> None:
    table = cat.create_table(name, columns="k BIGINT, v STRING", primary_key="k")
    if rows:
        table.upsert(pa.table({"k": [r[0] for r in rows], "v": [r[1] for r in rows]}))


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO b.t VALUES (9, 'injected')",
        "INSERT INTO __versioned.x SELECT 1",
        "INSERT OVERWRITE DIRECTORY '{out}' USING parquet SELECT * FROM b.t",
        "CREATE TABLE b.evil (a INT) USING parquet LOCATION '{out}'",
        "CREATE TABLE b.evil2 USING parquet LOCATION '{out}' AS SELECT * FROM b.t",
        "DROP VIEW b.t",
        "SET spark.sql.runSQLOnFiles=true",
        "CACHE TABLE b.t",
        "EXPLAIN SELECT * FROM b.t",
        "SELECT transform(k) USING 'touch {out}' FROM b.t",
        "SELECT * FROM b.t VERSION AS OF 1",
    ],
)
def test_sql_runs_queries_only_and_writes_nothing(cat: Any, tmp_path: Path, statement: str) -> None:
    _table(cat, "b.t", [(1, "one")])
    out = tmp_path / "out"
    with pytest.raises(QueryError, match="read-only queries"):
        cat.sql(statement.format(out=out))
    assert not out.exists()
    assert sorted(tuple(r) for r in cat.sql("SELECT k, v FROM b.t").collect()) == [(1, "one")]


@pytest.mark.parametrize(
    "relation", ["parquet.`{wh}`", "text.`/etc/passwd`", "json.`{wh}`", "`{wh}`"]
)
def test_sql_never_reads_files_by_path(cat: Any, tmp_path: Path, relation: str) -> None:
    _table(cat, "b.t", [(1, "one")])
    with pytest.raises(QueryError, match=r"(not a table|name tables as DB\.TABLE)"):
        cat.sql("SELECT * FROM " + relation.format(wh=tmp_path / "wh"))


def test_sql_needs_read_permission_on_every_table_it_names(
    cat: Any, spark: Any, tmp_path: Path
) -> None:
    from versioned.api.catalog import connect

    _table(cat, "b.t", [(1, "one")])
    _table(cat, "b.u", [(2, "two")])
    cat.grant("bob", "read", "b.t")
    bob = connect(warehouse=str(tmp_path / "wh"), spark=spark, user="bob")
    try:
        assert [tuple(r) for r in bob.sql("SELECT k, v FROM b.t").collect()] == [(1, "one")]
        with pytest.raises(PermissionDeniedError, match=r"bob may not read b\.u"):
            bob.sql("SELECT * FROM b.t WHERE k IN (SELECT k FROM b.u)")
        with pytest.raises(PermissionDeniedError):
            bob.sql("WITH x AS (SELECT * FROM b.u) SELECT * FROM x")
    finally:
        bob.close()


def test_a_table_named_like_an_internal_table_is_not_shadowed(cat: Any) -> None:
    _table(cat, "b.t", [(1, "one")])
    cat.table("b.t").upsert(pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}))
    _table(cat, "b.__t_data", [(7, "seven")])
    assert [tuple(r) for r in cat.sql("SELECT k, v FROM b.`__t_data`").collect()] == [(7, "seven")]
    assert cat.sql("SELECT count(*) AS n FROM b.t").collect()[0]["n"] == 3


def test_internal_tables_are_not_queryable(cat: Any) -> None:
    _table(cat, "b.t", [(1, "one")])
    cat.sql("SELECT * FROM b.t").collect()
    internal = [r.tableName for r in cat.spark.sql("SHOW TABLES IN `__versioned`").collect()]
    assert internal, "the view's private tables live in __versioned"
    with pytest.raises(QueryError, match="not a table"):
        cat.sql(f"SELECT * FROM `__versioned`.`{internal[0]}`")


def test_reflection_is_off_in_queries_but_not_in_the_callers_session(cat: Any) -> None:
    with pytest.raises(QueryError, match="reflect"):
        cat.sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home')").collect()
    row = cat.spark.sql("SELECT reflect('java.lang.String', 'valueOf', 1) AS r").collect()[0]
    assert row["r"] == "1"


def test_reserved_database_names_are_refused_at_create_table(cat: Any) -> None:
    for name in ("global_temp.t", "spark_catalog.t", "__versioned.t", "__x.t", "system.t"):
        with pytest.raises(InvalidNameError, match="reserved"):
            cat.create_table(name, columns="k BIGINT", primary_key="k")


def test_keyword_and_default_names_are_quoted_everywhere(cat: Any) -> None:
    _table(cat, "select.from", [(1, "kw")])
    _table(cat, "default.t", [(2, "dflt")])
    got = cat.sql("SELECT k FROM `select`.`from` UNION ALL SELECT k FROM `default`.t").collect()
    assert sorted(r["k"] for r in got) == [1, 2]


def test_every_table_of_a_query_reads_its_latest_commit(cat: Any) -> None:
    _table(cat, "b.t", [(1, "one")])
    _table(cat, "b.u", [(1, "uno")])
    query = "SELECT t.v AS tv, u.v AS uv FROM b.t t JOIN b.u u ON t.k = u.k"
    assert [tuple(r) for r in cat.sql(query).collect()] == [("one", "uno")]
    cat.table("b.u").upsert(pa.table({"k": [1], "v": ["eins"]}))
    assert [tuple(r) for r in cat.sql(query).collect()] == [("one", "eins")]


def test_an_unchanged_table_is_not_registered_again(cat: Any) -> None:
    _table(cat, "b.t", [(1, "one")])
    external = cat.spark._jsparkSession.sharedState().externalCatalog()
    cat.sql("SELECT * FROM b.t").collect()
    created = external.getTable("b", "t").createTime()
    private = _private_tables(cat, "1_b_t_")
    cat.sql("SELECT * FROM b.t").collect()
    cat.register_views()
    assert external.getTable("b", "t").createTime() == created
    cat.table("b.t").upsert(pa.table({"k": [2], "v": ["two"]}))
    assert cat.sql("SELECT count(*) AS n FROM b.t").collect()[0]["n"] == 2
    assert external.getTable("b", "t").createTime() != created
    now = _private_tables(cat, "1_b_t_")
    assert private and now and not private & now, "the replaced private tables are dropped"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_query_on_an_unchanged_table_reads_one_catalog_record_and_runs_no_ddl(
    cat: Any, layout: str
) -> None:
    table = cat.create_table("b.t", columns="k BIGINT, v STRING", primary_key="k", layout=layout)
    table.upsert(pa.table({"k": [1], "v": ["one"]}))
    external = cat.spark._jsparkSession.sharedState().externalCatalog()
    assert cat.sql("SELECT count(*) AS n FROM b.t").collect()[0]["n"] == 1
    created = external.getTable("b", "t").createTime()
    with _catalog_statements() as statements:
        assert cat.sql("SELECT count(*) AS n FROM b.t").collect()[0]["n"] == 1
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) == 1 and " tables" in reads[0], statements
    assert external.getTable("b", "t").createTime() == created
    table.upsert(pa.table({"k": [2], "v": ["two"]}))
    assert cat.sql("SELECT count(*) AS n FROM b.t").collect()[0]["n"] == 2
    assert external.getTable("b", "t").createTime() != created


def test_two_catalogs_sharing_a_session_and_a_table_name_each_query_their_own(
    cat: Any, tmp_path: Path
) -> None:
    from versioned.api.catalog import connect

    _table(cat, "b.t", [(1, "first catalog")])
    with connect(warehouse=str(tmp_path / "other"), spark=cat.spark, user="alice") as other:
        _table(other, "b.t", [(1, "second catalog")])
        for _ in range(2):
            assert [r["v"] for r in cat.sql("SELECT v FROM b.t").collect()] == ["first catalog"]
            got = [r["v"] for r in other.sql("SELECT v FROM b.t").collect()]
            assert got == ["second catalog"]


@contextmanager
def _catalog_statements() -> Iterator[list[str]]:
    """The SQL statements every catalog connection runs meanwhile."""
    import sqlalchemy as sa

    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", record)


def _private_tables(cat: Any, prefix: str) -> set[str]:
    shown = cat.spark.sql("SHOW TABLES IN `__versioned`").collect()
    return {r.tableName for r in shown if r.tableName.startswith(prefix)}


def test_syntax_errors_and_unknown_columns_are_query_errors(cat: Any) -> None:
    _table(cat, "b.t", [(1, "one")])
    with pytest.raises(QueryError, match="SQL syntax error"):
        cat.sql("SELEC 1")
    with pytest.raises(QueryError, match="nope"):
        cat.sql("SELECT nope FROM b.t")
    with pytest.raises(QueryError, match=r"name tables as DB\.TABLE"):
        cat.sql("SELECT * FROM t")
