"""Sub-expressions computed once per row, in a projection of their own.

A Spark `Column` is an expression tree: a value used ten times in a larger expression is ten
copies of its tree, and decoders that build on each other multiply the copies (Debezium's
decoding once made a 1 MB plan for a 16-column table, and Spark spent most of a minute
analysing and optimising it). `Bindings` gives such a value a column of its own in a
projection below the one that uses it: the uses reference the column, and Spark's
``CollapseProject`` does not inline an expression that is not cheap into several uses, so the
optimised plan computes it once too.

    bindings = Bindings("#dbz")
    text = bindings.bind(F.trim(raw))            # F.col("#dbz0")
    frame = bindings.apply(frame).select(uses_of_text...)

Inside one expression builder, where no projection can be added, `let` binds a value to a
lambda variable instead (a one-element ``transform``: Spark evaluates such lambdas without
generated code, so keep it to values that are not on every row's path). Builders of many
nested expressions write SQL text (`bind_sql`, `let`, one ``F.expr`` at the end): built from
Column functions, every node is a py4j round trip or more.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_LAMBDA_NAMES = itertools.count()


class Bindings:
    """Named sub-expressions, added to a frame as columns by `apply`.

    A binding of ``level`` 0 reads the frame's columns; one of level 1 may also read the
    bindings of level 0, and so on: each level is one projection.

    Args:
        prefix: Start of the columns' names; it must not start any column of the frame the
            bindings are applied to (the ``#`` names of the feed readers are internal).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._levels: list[dict[str, Column]] = []

    def __len__(self) -> int:
        return sum(len(level) for level in self._levels)

    def bind(self, value: Column, *, level: int = 0) -> Column:
        """A reference to ``value``, computed once per row once `apply` adds it."""
        return F.col(self.bind_sql(value, level=level))

    def bind_sql(self, value: Column | str, *, level: int = 0) -> str:
        """`bind` for SQL text: ``value`` (a Column, or a SQL expression that may reference
        bindings of lower levels) is bound, and the reference is returned as SQL text."""
        while len(self._levels) <= level:
            self._levels.append({})
        name = f"{self.prefix}{len(self)}"
        self._levels[level][name] = value if isinstance(value, Column) else F.expr(value)
        return f"`{name}`"

    def apply(self, frame: DataFrame) -> DataFrame:
        """``frame`` with a column per binding (``frame`` itself when there is none).

        Raises:
            ValueError: ``frame`` already has a column of a binding's name.
        """
        names = {name for level in self._levels for name in level}
        taken = sorted(names & set(frame.columns))
        if taken:
            raise ValueError(f"bindings {taken} clash with columns of the frame")
        for level in self._levels:
            if level:
                frame = frame.select("*", *[value.alias(name) for name, value in level.items()])
        return frame


def lambda_variable() -> str:
    """A name for a lambda variable in SQL text (``x -> ...``), unique in the process, so
    nested lambdas never shadow one another."""
    return f"v_{next(_LAMBDA_NAMES)}"


def let(value: str, body: Callable[[str], str]) -> str:
    """SQL text of ``body(value)``, with ``value`` (SQL text) one expression however often
    ``body`` uses the name it is given."""
    name = lambda_variable()
    return f"element_at(transform(array({value}), {name} -> {body(name)}), 1)"
