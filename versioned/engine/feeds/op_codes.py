"""Op codes of change feeds, normalised to ``I`` (insert), ``U`` (update/upsert), ``D`` (delete).

``I`` and ``U`` both mean "upsert this row" when a batch is applied; the distinction is kept
only for the counts of the commit summary. Accepted spellings, in any case and with
surrounding spaces ignored:

======  =================================================================
``I``   ``i``, ``insert``, Debezium ``c`` (create)
``U``   ``u``, ``update``, ``upsert``, Debezium ``r`` (snapshot read)
``D``   ``d``, ``delete``
======  =================================================================
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

INSERT = "I"
UPDATE = "U"
DELETE = "D"

OP_CODE_SPELLINGS: dict[str, str] = {
    "i": INSERT,
    "insert": INSERT,
    "c": INSERT,
    "u": UPDATE,
    "update": UPDATE,
    "upsert": UPDATE,
    "r": UPDATE,
    "d": DELETE,
    "delete": DELETE,
}

# Longest op-code text quoted in a rejection reason; the whole record is in ``_raw``.
_QUOTE_LIMIT = 40


def canonical_op_code(text: str | None) -> str | None:
    """The canonical op code of one spelling, or ``None`` if it is not a known op code."""
    if text is None:
        return None
    return OP_CODE_SPELLINGS.get(text.strip().lower())


def normalise_op_code(raw: Column) -> Column:
    """A Spark expression mapping an op-code column to ``I``/``U``/``D``.

    Args:
        raw: The op codes as written in the feed (any type; compared as text).

    Returns:
        A string column: the canonical op code, or null when ``raw`` is null or unknown.
    """
    spellings = F.create_map(*[F.lit(v) for pair in OP_CODE_SPELLINGS.items() for v in pair])
    return F.try_element_at(spellings, F.lower(F.trim(raw.cast("string"))))


def op_code_problem(raw: Column, op: Column) -> Column:
    """Why a row's op code is unusable, or null when it is fine.

    Args:
        raw: The op codes as written in the feed.
        op: `normalise_op_code` of ``raw``.

    Returns:
        A string column: ``"op code is null"``, ``"unknown op code 'X'"`` or null.
    """
    text = raw.cast("string")
    quoted = F.when(
        F.length(text) > _QUOTE_LIMIT, F.concat(F.substring(text, 1, _QUOTE_LIMIT), F.lit("..."))
    ).otherwise(text)
    return (
        F.when(raw.isNull(), F.lit("op code is null"))
        .when(op.isNull(), F.concat(F.lit("unknown op code '"), quoted, F.lit("'")))
        .otherwise(F.lit(None).cast("string"))
    )
