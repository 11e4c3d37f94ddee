"""A SQLite catalog this process cannot write: why not, and how it is read all the same.

Whether the process can write is asked of the kernel with ``access(2)`` for the effective
user (``faccessat`` with ``AT_EACCESS``), not worked out from permission bits: the kernel
applies the rules an ``open`` would meet (root's override, ACLs, read-only mounts, which
refuse root too, immutable inodes). SQLite can write a catalog when the file is writable
and it can create the catalog's ``-wal`` and ``-shm`` files next to it (the directory is
writable) or finds both there already, writable. The file is not opened for writing to find
out: closing any descriptor of a file drops every POSIX lock the process holds on it,
including those of this process's open catalog connections. Should the answer be wrong
(network file systems may decide only on write), SQLite's own "attempt to write a readonly
database" becomes the same `CatalogReadOnlyError` (`versioned.catalog.connection`).

A read-only catalog is read by SQLite's rules for WAL databases without write access
(https://sqlite.org/wal.html, "Read-Only Databases", SQLite 3.22 and later):

* A ``-wal`` file exists (a writer has the catalog open, or one stopped before its final
  checkpoint): open it ``mode=ro``. SQLite reads the log through the existing ``-shm`` index
  (or a private copy of it when it cannot write that file), so transactions committed to the
  log are seen, and a writer on this machine may go on writing meanwhile.
* No ``-wal`` file (the last connection to close copied the log into the file and deleted
  it, as every clean close does): ``mode=ro`` fails, because SQLite cannot create the log
  here, so open it ``mode=ro&immutable=1``, which reads the file alone and takes no locks.
  That is safe only while nobody writes. When no log exists nobody has the catalog open
  (opening it creates the log), but a writer may start during the read, so:

  - the connection holds a read lock on the byte range of SQLite's SHARED lock, as any
    reader does (an open-file-description lock, which no other descriptor's close drops;
    Linux): a writer that starts meanwhile cannot take the EXCLUSIVE lock its close needs
    to fold the log into the file, so the file stays as it is and the log stays;
  - the connection serves one transaction, and its commit checks that the file and the
    absence of a log are as they were when it opened; when not, it raises
    `CatalogChangedDuringRead`, which the catalog connection retries (through the writer's
    log, or on the new file). Where no such lock exists, this check alone guards the read,
    down to the resolution of the file's modification time.

``immutable=1`` never looks at a ``-wal`` file, so it is not used when one exists: it would
miss the transactions in it and could read pages a checkpoint was midway copying.
"""

from __future__ import annotations

import errno
import getpass
import os
import sqlite3
import struct
import sys
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

# SQLite's unix VFS takes its SHARED lock as a read lock on these bytes of the database file
# (os_unix.c: PENDING_BYTE 0x40000000, SHARED_FIRST = PENDING_BYTE + 2, SHARED_SIZE 510),
# and EXCLUSIVE as a write lock on them.
_SHARED_FIRST = 0x40000000 + 2
_SHARED_SIZE = 510
# `struct flock` of 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid, padding.
_FLOCK = "hhqqi4x"


class CatalogChangedDuringRead(sqlite3.OperationalError):
    """An unlocked (``immutable``) read of a catalog file overlapped a writer: run it again."""


@dataclass(frozen=True)
class FileState:
    """What tells whether a SQLite file changed: which file it is, its size and change
    times, and whether a write-ahead log lies next to it."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    wal: bool

    @classmethod
    def of(cls, path: Path) -> FileState:
        """The state of the SQLite file at ``path`` now.

        Raises:
            OSError: The file cannot be looked at.
        """
        st = path.stat()
        return cls(
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, _log(path).exists()
        )


class ReadOnlyConnection(sqlite3.Connection):
    """A read-only SQLite connection to ``path``; ``immutable_since`` is the file's state
    when it was opened ``immutable=1`` (``None``: opened with SQLite's WAL locking), and
    ``release`` lets go of the read lock held meanwhile."""

    path: Path
    immutable_since: FileState | None = None
    release: Callable[[], object] | None = None

    def close(self) -> None:
        """Close the connection, then release its read lock."""
        try:
            super().close()
        finally:
            if self.release is not None:
                self.release()


def write_refusal(path: Path) -> str | None:
    """Why this process cannot write the SQLite database at ``path``, as a phrase for an
    error message; ``None`` when it can, or when the file does not exist (then there is
    nothing to protect, and creating it reports what is wrong)."""
    if not path.is_file():
        return None
    if _on_read_only_file_system(path):
        return "it is on a read-only file system"
    if not _writable(path):
        return f"the file is not writable by user {_user()}"
    directory = path.parent
    if _writable(directory, os.W_OK | os.X_OK) or all(
        _writable(p) for p in (_log(path), _index(path))
    ):
        return None
    return (
        f"its directory {directory} is not writable by user {_user()} (SQLite creates the "
        "catalog's -wal and -shm files there)"
    )


def connect(path: Path, timeout_s: float) -> ReadOnlyConnection:
    """Open the SQLite file at ``path`` read-only: ``mode=ro`` when a write-ahead log exists,
    else ``immutable=1`` under a read lock (see the module's docstring).

    Raises:
        sqlite3.OperationalError: The file cannot be opened, or a writer kept it locked for
            ``timeout_s``.
    """
    attempt = 0
    while True:
        attempt += 1
        lock: int | None = None
        try:
            if not _log(path).exists():
                lock = _read_lock(path, timeout_s)
            state = FileState.of(path)  # after the lock: no writer folds its log in from now
        except OSError as exc:
            if lock is not None:
                os.close(lock)
            raise sqlite3.OperationalError(f"unable to open database file: {exc}") from exc
        if not state.wal:
            return _open(path, "mode=ro&immutable=1", timeout_s, state, lock)
        if lock is not None:  # a writer came first: read through its log
            os.close(lock)
        connection = _open(path, "mode=ro", timeout_s, None, None)
        try:  # open the log now, under SQLite's shared lock, which keeps it from going
            connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
            return connection
        except sqlite3.OperationalError:
            connection.close()
            if _log(path).exists() or attempt >= 3:
                raise
        # The last writer closed, folding its log into the file, between look and open.


def _open(
    path: Path, query: str, timeout_s: float, state: FileState | None, lock: int | None
) -> ReadOnlyConnection:
    """Open ``path`` with URI parameters ``query``; the connection closes ``lock`` (a
    descriptor) when it closes, and ``state`` is the file's state when opened immutable."""
    try:
        connection = sqlite3.connect(
            f"file:{quote(str(path))}?{query}",
            uri=True,
            timeout=timeout_s,
            isolation_level=None,
            check_same_thread=False,
            factory=ReadOnlyConnection,
        )
    except BaseException:
        if lock is not None:
            os.close(lock)
        raise
    connection.path = path
    connection.immutable_since = state
    if lock is not None:  # closing the descriptor lets go of the lock
        connection.release = weakref.finalize(connection, os.close, lock)
    return connection


def check_unchanged(connection: object) -> None:
    """Raise `CatalogChangedDuringRead` when ``connection`` was opened ``immutable=1`` and
    its file or log changed since (a writer started); other connections pass."""
    if not isinstance(connection, ReadOnlyConnection) or connection.immutable_since is None:
        return
    try:
        now: FileState | None = FileState.of(connection.path)
    except OSError:
        now = None
    if now != connection.immutable_since:
        raise CatalogChangedDuringRead(
            f"the catalog file {connection.path} changed while it was read without locks"
        )


def unreadable_advice(path: Path) -> str:
    """What to do about a read-only SQLite file that SQLite could not open."""
    if _log(path).exists() and not _index(path).exists():
        return (
            "its -wal log has no -shm index beside it, which SQLite needs to read the log and "
            "cannot create here: someone who can write the catalog must open it once (any "
            "versioned command) to fold the log into the file"
        )
    return f"check that user {_user()} may read the file and its directory"


def holds_read_locks() -> bool:
    """Whether `connect` holds a read lock during an unlocked read here (64-bit Linux)."""
    if not sys.platform.startswith("linux") or struct.calcsize("P") != 8:
        return False  # _FLOCK is the layout of 64-bit Linux only
    import fcntl

    return hasattr(fcntl, "F_OFD_SETLK")


def _read_lock(path: Path, timeout_s: float) -> int | None:
    """A descriptor of ``path`` holding a read lock on SQLite's SHARED bytes (closing it lets
    go); ``None`` where such locks do not exist or the file system refuses them. Waits up to
    ``timeout_s`` while a closing writer holds them to fold its log into the file.

    Raises:
        OSError: The file cannot be opened for reading.
        sqlite3.OperationalError: A writer held the bytes locked for ``timeout_s``.
    """
    if not holds_read_locks():
        return None
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    request = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, _SHARED_FIRST, _SHARED_SIZE, 0)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, request)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    raise sqlite3.OperationalError("database is locked") from exc
                return None  # no such locks here (e.g. some network file systems)
            time.sleep(0.01)


def _log(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _index(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def _writable(path: Path, mode: int = os.W_OK) -> bool:
    """Whether the effective user may write ``path`` (the kernel's answer, see above)."""
    effective = os.access in os.supports_effective_ids
    return os.access(path, mode, effective_ids=effective)


def _on_read_only_file_system(path: Path) -> bool:
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        return False
    try:
        return bool(statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _user() -> str:
    """The effective user's name (whom the kernel checks), else the login name."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, AttributeError, KeyError):  # not POSIX, or a uid without a name
        return getpass.getuser()
