"""The streaming API's errors: one root, each also its area's error (so the CLI's exit codes
and ``except`` clauses on the area work), and each pickles with its attributes."""

from __future__ import annotations

import pickle

import pytest

from versioned import errors as base
from versioned.cli.main import UserError
from versioned.layouts.ingest_errors import (
    InvalidColumn,
    InvalidPartition,
    InvalidTable,
    SerializationError,
    StreamingConnectionError,
    StreamingError,
    StreamingIOFailure,
    StreamingTransactionError,
)

AREAS = [
    (StreamingConnectionError, base.InputError, 2),
    (InvalidTable, base.NoSuchTableError, 3),
    (InvalidPartition, base.InputError, 2),
    (InvalidColumn, base.SchemaError, 2),
    (SerializationError, base.InputError, 2),
    (StreamingTransactionError, base.TransactionError, 1),
    (StreamingIOFailure, base.StorageError, 75),
]


@pytest.mark.parametrize(("error", "area", "exit_code"), AREAS)
def test_each_streaming_error_is_a_streaming_error_and_its_areas_error(
    error: type[StreamingError], area: type[base.VersionedError], exit_code: int
) -> None:
    raised = error("what happened; what to do", table="testing.alerts")
    assert isinstance(raised, StreamingError) and isinstance(raised, base.VersionedError)
    assert isinstance(raised, area)
    assert UserError(raised).exit_code == exit_code


def test_invalid_table_is_caught_as_not_found() -> None:
    with pytest.raises(base.NotFoundError):
        raise InvalidTable("table testing.nope does not exist")


def test_only_an_io_failure_is_retryable() -> None:
    assert [e for e, _, _ in AREAS if e.retryable] == [StreamingIOFailure]


@pytest.mark.parametrize(("error", "area", "exit_code"), AREAS)
def test_streaming_errors_pickle_with_their_attributes(
    error: type[StreamingError], area: type[base.VersionedError], exit_code: int
) -> None:
    raised = error("record 3 cannot be written", index=3, reason="bad", fields=("id", None))
    back = pickle.loads(pickle.dumps(raised))
    assert type(back) is error and isinstance(back, area)
    assert (str(back), back.index, back.reason, back.fields) == (
        "record 3 cannot be written",
        3,
        "bad",
        ("id", None),
    )
    assert back.exit_code == exit_code
