"""Running out of space while writing, as one clear `StorageError` whoever hit it.

A full file system (or an exhausted quota) reaches versioned as an ``OSError`` from Python
or pyarrow, an Arrow error, or a Java ``IOException`` inside a Spark job failure, each with
the system's own words in it. `out_of_space` turns any of them into one `StorageError`
(``out_of_space=True``) saying what ran out and what to do. Writers stage their files before
they commit, so a write that fails this way committed nothing: the committed table is as it
was, and ``versioned vacuum`` removes what it staged once the grace period has passed.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

from versioned.errors import StorageError

_MARKERS = ("No space left on device", "Disk quota exceeded")
_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_out_of_space(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it was raised from, says the disk or quota is full."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _ERRNOS:
            return True
        if any(marker in str(current) for marker in _MARKERS):
            return True
        current = current.__cause__ or current.__context__
    return False


@contextmanager
def out_of_space(what: str, where: str) -> Iterator[None]:
    """Run a write (``what``, e.g. "upsert into db.t") into ``where``; a full disk or
    quota becomes a `StorageError` saying so. Other errors pass unchanged."""
    try:
        yield
    except StorageError as exc:
        if getattr(exc, "out_of_space", False) or not is_out_of_space(exc):
            raise
        raise _full(what, where) from exc
    except Exception as exc:
        if not is_out_of_space(exc):
            raise
        raise _full(what, where) from exc


def _full(what: str, where: str) -> StorageError:
    return StorageError(
        f"{what} ran out of space on the file system of {where} (no space left on the device, "
        "or the quota is used up): nothing was committed and the table is as it was; free "
        "some space and run it again (`versioned vacuum` removes what it had staged)",
        path=where,
        out_of_space=True,
    )
