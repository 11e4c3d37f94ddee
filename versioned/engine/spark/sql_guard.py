"""What `versioned sql` and `Catalog.sql` run: read-only queries over tables of the catalog.

The statement is parsed by the session's own SQL parser (so exactly as Spark would run it)
and its unresolved logical plan is walked before anything is analysed or executed:

* every operator must be one that queries are built of (an allow-list): commands, DDL,
  ``INSERT`` (into tables or directories), ``CACHE``, ``SET``, script transforms
  (``TRANSFORM ... USING``) and time travel are refused;
* every relation must be ``DB.TABLE`` or a ``WITH`` name in scope, without options: a path
  (``parquet.`/data```) is not a table name, so files are never read;
* subqueries (in expressions, ``LATERAL``, ``WITH``) are walked the same way.

The caller then checks that the user may read each table named, and runs the query in a
session where file-based relations and reflection functions do not exist
(`query_session`), a second line of defence.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from versioned.errors import InvalidNameError, QueryError
from versioned.names import TableName, identifier

QUERY_OPERATORS = frozenset(
    {
        "Aggregate",
        "Deduplicate",
        "Distinct",
        "Except",
        "Expand",
        "Filter",
        "Generate",
        "GlobalLimit",
        "Intersect",
        "Join",
        "LateralJoin",
        "LimitAll",
        "LocalLimit",
        "LocalRelation",
        "Offset",
        "OneRowRelation",
        "PipeOperator",
        "Pivot",
        "Project",
        "Range",
        "RebalancePartitions",
        "Repartition",
        "RepartitionByExpression",
        "Sample",
        "Sort",
        "SubqueryAlias",
        "Tail",
        "Union",
        "Unpivot",
        "UnresolvedHaving",
        "UnresolvedHint",
        "UnresolvedInlineTable",
        "UnresolvedQualify",
        "UnresolvedRelation",
        "UnresolvedSubqueryColumnAliases",
        "UnresolvedTVFAliases",
        "UnresolvedTableValuedFunction",
        "UnresolvedWith",
        "Window",
        "WithWindowDefinition",
    }
)
"""Logical operators (Spark class names) a read-only query is made of."""

_REFUSED_PARTS = {
    "ScriptTransformation": "TRANSFORM ... USING (it runs a program)",
    "RelationTimeTravel": "time travel in SQL (use `versioned show --as-of V`)",
}
_ONLY_QUERIES = "versioned sql runs read-only queries (SELECT, WITH, VALUES, TABLE) only"


def query_tables(spark: SparkSession, text: str) -> tuple[TableName, ...]:
    """The tables a read-only query reads, in order of appearance.

    Raises:
        QueryError: The text does not parse, is not a query, or reads something other
            than tables named ``DB.TABLE``.
    """
    if not isinstance(text, str) or not text.strip():
        raise QueryError("the query is empty: give a SELECT statement")
    plan = _parse(spark, text)
    found: list[TableName] = []
    _walk(plan, frozenset(), found, text)
    return tuple(dict.fromkeys(found))


def _parse(spark: SparkSession, text: str) -> Any:
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        return parser.parsePlan(text)
    except Py4JJavaError as error:  # not converted by PySpark
        message = str(error.java_exception.getMessage() or "")
    except AnalysisException as error:  # ParseException, as PySpark converts it
        message = str(error)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = lines[0] if lines else "cannot parse the query"
    raise QueryError(f"SQL syntax error: {first}", query=text) from None


def _walk(node: Any, scope: frozenset[str], found: list[TableName], text: str) -> None:
    operator = str(node.getClass().getSimpleName()).rstrip("$")
    if operator not in QUERY_OPERATORS:
        raise QueryError(_refusal(operator, node, text), query=text, operator=operator)
    if operator == "UnresolvedRelation":
        found.extend(_relation(node, scope, text))
        return
    if operator == "UnresolvedWith":
        _walk_with(node, scope, found, text)
        return
    for child in _items(node.children()):
        _walk(child, scope, found, text)
    for inner in _items(node.innerChildren()):  # subqueries in this operator's expressions
        _walk(inner, scope, found, text)


def _walk_with(node: Any, scope: frozenset[str], found: list[TableName], text: str) -> None:
    """A WITH clause: each definition sees the ones before it (and itself if RECURSIVE)."""
    try:
        recursive = bool(node.allowRecursion())
    except Exception:  # older Spark: no recursive CTEs
        recursive = False
    visible = set(scope)
    for pair in _items(node.cteRelations()):
        name = str(pair._1()).lower()
        if recursive:
            visible.add(name)
        _walk(pair._2(), frozenset(visible), found, text)
        visible.add(name)
    for child in _items(node.children()):
        _walk(child, frozenset(visible), found, text)


def _relation(node: Any, scope: frozenset[str], text: str) -> list[TableName]:
    parts = [str(p) for p in _items(node.multipartIdentifier())]
    shown = ".".join(f"`{p}`" if not p.isidentifier() else p for p in parts)
    if not node.options().isEmpty():
        raise QueryError(f"table options are not allowed ({shown} WITH (...))", query=text)
    if len(parts) == 1 and parts[0].lower() in scope:
        return []
    if len(parts) == 1:
        raise QueryError(
            f"{shown} is not a WITH query of this statement: name tables as DB.TABLE",
            query=text,
        )
    if len(parts) == 2:
        try:
            return [TableName(identifier(parts[0], "database"), identifier(parts[1], "table"))]
        except InvalidNameError:
            pass
    raise QueryError(
        f"{shown} is not a table: queries read tables of the catalog, named DB.TABLE, "
        "never files or paths",
        query=text,
    )


def _refusal(operator: str, node: Any, text: str) -> str:
    if operator in _REFUSED_PARTS:
        return f"{_ONLY_QUERIES}: {_REFUSED_PARTS[operator]} is not allowed"
    words = text.strip().split(None, 1)
    keyword = words[0].upper() if words else operator
    if keyword in {"SELECT", "WITH", "VALUES", "TABLE", "FROM", "("}:
        return f"{_ONLY_QUERIES}: the query uses {operator}, which is not allowed"
    return f"{_ONLY_QUERIES}; {keyword} statements are refused"


def _items(seq: Any) -> Iterable[Any]:
    iterator = seq.iterator()
    while iterator.hasNext():
        yield iterator.next()


_REFLECTION = ("reflect", "java_method", "try_reflect")


def query_session(spark: SparkSession) -> SparkSession:
    """A session for user queries: same SparkContext and session catalog as ``spark``, but
    its own temporary views and settings, no SQL on files and no reflection functions.

    ``spark`` itself is not changed.
    """
    session = spark.newSession()
    session.conf.set("spark.sql.runSQLOnFiles", "false")
    jvm: Any = session._jvm
    identifier = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    registry = session._jsparkSession.sessionState().functionRegistry()
    for name in _REFLECTION:
        registry.dropFunction(identifier(name, jvm.scala.Some("builtin"), jvm.scala.Some("system")))
    return session
