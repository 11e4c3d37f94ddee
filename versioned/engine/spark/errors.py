"""Spark's errors about what a user wrote or handed in, as one-line `VersionedError`s.

Only errors that are about the user's input are translated: a query or filter that does not
parse or resolve, a value a query cannot compute (ANSI errors), an input file Spark cannot
read. Anything else (a bug, a lost executor) stays what it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from py4j.protocol import Py4JJavaError
from pyspark.errors import (
    AnalysisException,
    ArithmeticException,
    DateTimeException,
    IllegalArgumentException,
    NumberFormatException,
    SparkRuntimeException,
    SparkUpgradeException,
)

from versioned.errors import InputError, QueryError

_QUERY_ERRORS = (
    AnalysisException,  # includes ParseException
    ArithmeticException,
    DateTimeException,
    IllegalArgumentException,
    NumberFormatException,
    SparkRuntimeException,
    SparkUpgradeException,
)
# Error conditions of input files Spark cannot read (wrong format, corrupt, unreadable).
_UNREADABLE_INPUT = ("FAILED_READ_FILE", "CANNOT_READ_FILE", "MALFORMED_RECORD_IN_PARSING")


def first_line(error: BaseException) -> str:
    """The first non-empty line of an error's message."""
    for line in str(error).strip().splitlines():
        if line.strip():
            return line.strip()
    return type(error).__name__


@contextmanager
def user_query_errors(what: str = "query") -> Iterator[None]:
    """Turn Spark's errors about a query (or filter) the user wrote into `QueryError`."""
    try:
        yield
    except _QUERY_ERRORS as error:
        raise QueryError(f"{what} failed: {first_line(error)}", what=what) from None


@contextmanager
def unreadable_input_errors(source: str) -> Iterator[None]:
    """Turn Spark's "cannot read this file" errors while reading ``source`` into `InputError`."""
    try:
        yield
    except Py4JJavaError as error:
        message = _java_message(error)
        if not any(condition in message for condition in _UNREADABLE_INPUT):
            raise
        detail = _root_cause(error)
        raise InputError(
            f"cannot read {source}: {message.splitlines()[0].strip()}"
            + (f" ({detail})" if detail else ""),
            source=source,
        ) from None


def _java_message(error: Py4JJavaError) -> str:
    try:
        return str(error.java_exception.getMessage() or "")
    except Exception:  # the gateway is gone: nothing to translate
        return ""


def _root_cause(error: Py4JJavaError) -> str:
    """The message of the innermost Java cause (e.g. "... is not a Parquet file")."""
    try:
        cause = error.java_exception
        while cause.getCause() is not None:
            cause = cause.getCause()
        lines = str(cause.getMessage() or "").strip().splitlines()
        return lines[0] if lines else ""
    except Exception:
        return ""
