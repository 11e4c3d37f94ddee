"""File access under one root (the warehouse), by local path or URI, through pyarrow.fs.

Every method takes a path relative to the root and checks it with `FileIO.resolve_inside`
first, so no caller can reach outside the root. Writes are atomic: bytes go to a hidden
``_tmp.<uuid>`` file in the target's directory, which is moved over the target only once
complete, so a reader (or a crash) never sees a partial file. Reads are recorded in
`FileIO.opened_files` so tests can prove which files a code path opened.
"""

from __future__ import annotations

import errno
import os
import posixpath
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.fs as pafs

from versioned.errors import StorageError, UnsafePathError
from versioned.storage.object_store import S3Location, is_s3, s3_location

TMP_PREFIX = "_tmp."
_COPY_CHUNK = 8 << 20


@dataclass(frozen=True)
class FileStat:
    """A file found by `FileIO.list_files`.

    Attributes:
        path: Relative to the root, ``/``-separated.
        size: Size in bytes.
        mtime: Last modification, seconds since the epoch.
    """

    path: str
    size: int
    mtime: float


class FileIO:
    """Files under one root directory of a local or remote file system."""

    opened_files: ClassVar[list[str]] = []
    """Process-wide: relative paths opened for reading by any instance, in order."""

    def __init__(
        self,
        fs: pafs.FileSystem,
        base: str,
        root: str,
        object_store: S3Location | None = None,
    ) -> None:
        self._fs = fs
        self._base = base.rstrip("/") or "/"
        self._local = isinstance(fs, pafs.LocalFileSystem)
        self.object_store = object_store
        """The S3 warehouse's settings (`storage.object_store`), or None."""
        self.root = root
        self.opened: list[str] = []
        """Relative paths this instance opened for reading, in order."""

    @classmethod
    def for_root(cls, root: str) -> FileIO:
        """A `FileIO` for a local directory or a URI (``file://``, ``s3://``, ``hdfs://``...).

        Args:
            root: The warehouse root. It need not exist yet.

        Raises:
            StorageError: The URI scheme is not supported or the file system is unreachable.
        """
        if "://" not in root:
            base = os.path.abspath(root)
            return cls(pafs.LocalFileSystem(), base, base)
        if is_s3(root):  # the AWS settings, for pyarrow here and for Spark's S3A
            location = s3_location(root)
            try:
                fs = location.filesystem()
            except (OSError, pa.ArrowException) as exc:
                raise StorageError(f"cannot open file system {root!r}: {exc}", root=root) from exc
            return cls(fs, location.base, location.spark_root, location)
        try:
            fs, base = pafs.FileSystem.from_uri(root)
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot open file system {root!r}: {exc}", root=root) from exc
        if isinstance(fs, pafs.LocalFileSystem):
            return cls(fs, base, base.rstrip("/") or "/")
        return cls(fs, base, root.split("?", 1)[0].rstrip("/"))

    @classmethod
    def reset_opened_files(cls) -> None:
        """Clear the process-wide `opened_files` record."""
        cls.opened_files.clear()

    def __repr__(self) -> str:
        return f"FileIO({self.root!r})"

    # --- paths ---------------------------------------------------------------------------------

    def resolve_inside(self, rel: str) -> str:
        """The file-system path of ``rel``, after checking it stays inside the root.

        Raises:
            UnsafePathError: ``rel`` is absolute, a URI, contains ``..``, a backslash or NUL,
                or (on a local file system) resolves through a symlink to outside the root.
        """
        if not isinstance(rel, str) or "\x00" in rel or "\\" in rel:
            raise UnsafePathError(f"path {rel!r} contains NUL or a backslash", path=rel)
        if rel.startswith("/") or "://" in rel:
            raise UnsafePathError(f"path {rel!r} must be relative to {self.root}", path=rel)
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise UnsafePathError(f"path {rel!r} must not contain '..'", path=rel)
        full = posixpath.join(self._base, *parts)
        if self._local:
            real_root = os.path.realpath(self._base)
            real = os.path.realpath(full)
            if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
                raise UnsafePathError(
                    f"path {rel!r} resolves through a symlink to {real}, outside {self.root}",
                    path=rel,
                )
        return full

    def full_path(self, rel: str) -> str:
        """What Spark should read for ``rel``: a local absolute path or a URI."""
        self.resolve_inside(rel)
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        return posixpath.join(self.root, *parts) if parts else self.root

    # --- reading -------------------------------------------------------------------------------

    def open_input(self, rel: str) -> pa.NativeFile:
        """Open a file for random-access reading (close it, or use it as a context manager)."""
        path = self.resolve_inside(rel)
        with self._errors("open", rel):
            handle = self._fs.open_input_file(path)
        self.opened.append(rel)
        FileIO.opened_files.append(rel)
        return handle

    @contextmanager
    def reading(self, rel: str) -> Iterator[None]:
        """Errors of reading ``rel`` through a handle `open_input` gave (a connection to an
        object store lost mid-read) become one-line `StorageError`s."""
        with self._errors("read", rel):
            yield

    def read_bytes(self, rel: str) -> bytes:
        """The whole content of a file."""
        with self.open_input(rel) as handle, self._errors("read", rel):
            return bytes(handle.read())

    def exists(self, rel: str) -> bool:
        """Whether a file or directory exists at ``rel``."""
        with self._errors("stat", rel):
            info = self._fs.get_file_info(self.resolve_inside(rel))
        return info.type != pafs.FileType.NotFound

    def size(self, rel: str) -> int:
        """Size of a file in bytes."""
        with self._errors("stat", rel):
            info = self._fs.get_file_info(self.resolve_inside(rel))
        if info.type != pafs.FileType.File or info.size is None:
            raise StorageError(f"no file {rel!r} under {self.root}", path=rel, not_found=True)
        return int(info.size)

    def list_files(self, rel_dir: str = "", recursive: bool = True) -> list[FileStat]:
        """Files under ``rel_dir``, sorted by path; ``[]`` if it does not exist.

        Only vacuum and orphan detection list directories; readers never do.
        """
        path = self.resolve_inside(rel_dir)
        selector = pafs.FileSelector(path, recursive=recursive, allow_not_found=True)
        with self._errors("list", rel_dir):
            infos = self._fs.get_file_info(selector)
        prefix = self._base.rstrip("/") + "/"
        stats = [
            FileStat(info.path[len(prefix) :], int(info.size or 0), (info.mtime_ns or 0) / 1e9)
            for info in infos
            if info.type == pafs.FileType.File and info.path.startswith(prefix)
        ]
        return sorted(stats, key=lambda s: s.path)

    # --- writing -------------------------------------------------------------------------------

    @contextmanager
    def open_output_atomic(self, rel: str) -> Iterator[pa.NativeFile]:
        """Write a file atomically: it appears complete at ``rel`` on a clean exit, or not at all.

        Parent directories are created. An existing file is replaced. On an object store the
        bytes are buffered and sent in one PUT, which is atomic there: no temporary object,
        no copy.
        """
        target = self.resolve_inside(rel)
        if target == self._base:
            raise UnsafePathError(f"path {rel!r} names the root, not a file under it", path=rel)
        if self.object_store is not None:
            buffer = pa.BufferOutputStream()
            yield buffer
            with self._errors("write", rel), self._fs.open_output_stream(target) as out:
                out.write(buffer.getvalue())
            return
        parent = posixpath.dirname(target)
        tmp = posixpath.join(parent, f"{TMP_PREFIX}{uuid.uuid4().hex}")
        with self._errors("write", rel):
            self._fs.create_dir(parent, recursive=True)
            out = self._fs.open_output_stream(tmp, compression=None)
        try:
            yield out
            with self._errors("write", rel):
                out.close()
                self._fs.move(tmp, target)
        except BaseException:
            with suppress(OSError, pa.ArrowException):  # vacuum removes leftover _tmp.* files
                if not out.closed:
                    out.close()
                self._fs.delete_file(tmp)
            raise

    def open_output(self, rel: str) -> pa.NativeFile:
        """Open ``rel`` for writing in place, creating its folders; the caller closes it.

        Not atomic: for files that grow while readers read only a committed prefix of them
        (streaming bucket files, whose committed length the catalog records). Anything else
        uses `open_output_atomic`.
        """
        target = self.resolve_inside(rel)
        with self._errors("write", rel):
            self._folder_for(target)
            return self._fs.open_output_stream(target, compression=None)

    def write_bytes_atomic(self, rel: str, data: bytes) -> None:
        """Write ``data`` to ``rel`` atomically (see `open_output_atomic`)."""
        with self.open_output_atomic(rel) as out:
            out.write(data)

    def copy_file(self, src_rel: str, dst_fileio: FileIO, dst_rel: str) -> None:
        """Copy a file of this root to ``dst_rel`` under ``dst_fileio``'s root, atomically."""
        with self.open_input(src_rel) as src, dst_fileio.open_output_atomic(dst_rel) as out:
            while chunk := src.read(_COPY_CHUNK):
                out.write(chunk)

    def move(self, src_rel: str, dst_rel: str) -> None:
        """Move a file, or a folder with everything in it, within the root: a rename where
        the file system has one. An object store has none: each object is copied and
        deleted, one by one (a folder moves file by file, not at once)."""
        src = self.resolve_inside(src_rel)
        dst = self.resolve_inside(dst_rel)
        with self._errors("move", src_rel):
            if self.object_store is not None:
                inside = pafs.FileSelector(src, recursive=True, allow_not_found=True)
                files = [i for i in self._fs.get_file_info(inside) if i.type == pafs.FileType.File]
                if files:  # a folder: S3 moves objects, not prefixes
                    for info in files:
                        self._fs.move(info.path, dst + info.path[len(src) :])
                    return
            self._folder_for(dst)
            self._fs.move(src, dst)

    def move_file(self, src_rel: str, dst_rel: str) -> None:
        """Move one file within the root (`move` without looking for a folder at
        ``src_rel``: on an object store one copy and one delete, no listing)."""
        dst = self.resolve_inside(dst_rel)
        with self._errors("move", src_rel):
            self._folder_for(dst)
            self._fs.move(self.resolve_inside(src_rel), dst)

    def _folder_for(self, target: str) -> None:
        """Create the folder a file goes into, where folders exist (not on an object store,
        where pyarrow would write a marker object for each)."""
        if self.object_store is None:
            self._fs.create_dir(posixpath.dirname(target), recursive=True)

    def makedirs(self, rel: str) -> None:
        """Create a directory and its parents (no error if it exists)."""
        if self.object_store is not None:
            return  # no folders on an object store: a marker object would cost a PUT
        with self._errors("mkdir", rel):
            self._fs.create_dir(self.resolve_inside(rel), recursive=True)

    def delete_file(self, rel: str, *, missing_ok: bool = False) -> None:
        """Delete one file."""
        path = self.resolve_inside(rel)
        try:
            with self._errors("delete", rel):
                self._fs.delete_file(path)
        except StorageError as exc:
            if not (missing_ok and getattr(exc, "not_found", False)):
                raise

    def delete_dir(self, rel: str, *, missing_ok: bool = False) -> None:
        """Delete a directory and everything under it (never the root itself)."""
        path = self.resolve_inside(rel)
        if path == self._base:
            raise UnsafePathError(f"refusing to delete the root {self.root}", path=rel)
        try:
            with self._errors("delete", rel):
                self._fs.delete_dir(path)
        except StorageError as exc:
            if not (missing_ok and getattr(exc, "not_found", False)):
                raise

    def delete_empty_dir(self, rel: str, *, empty_subdirs: bool = False) -> bool:
        """Delete a directory only if no file is in it.

        Unlike `delete_dir` this never deletes a file, even one that another process puts
        into the directory at the same moment: on a local file system each directory goes
        with a single ``rmdir``, which fails on a non-empty directory. pyarrow offers no such
        operation for other file systems (object stores, HDFS), where a check followed by a
        recursive delete could take a concurrently written file with it, so there nothing
        is deleted.

        Args:
            empty_subdirs: Also delete the directory's empty subdirectories, deepest first,
                so that one holding only empty directories goes too. Without it the
                directory goes only when it holds nothing at all.

        Returns:
            Whether no directory is left at ``rel`` (also when there was none).
        """
        path = self.resolve_inside(rel)
        if path == self._base:
            raise UnsafePathError(f"refusing to delete the root {self.root}", path=rel)
        if not self._local:
            return False
        if empty_subdirs:  # os.walk never follows a symlink; rmdir fails on one
            for below, _dirs, _files in os.walk(path, topdown=False):
                if below != path:
                    self._rmdir_if_empty(below, rel)
        return self._rmdir_if_empty(path, rel)

    def _rmdir_if_empty(self, path: str, rel: str) -> bool:
        try:
            os.rmdir(path)
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                return False
            raise StorageError(
                f"cannot delete {rel!r} under {self.root}: {exc}", path=rel, op="delete"
            ) from exc
        return True

    @contextmanager
    def _errors(self, op: str, rel: str) -> Iterator[None]:
        try:
            yield
        except FileNotFoundError as exc:
            raise StorageError(
                f"cannot {op} {rel!r}: not found under {self.root}",
                path=rel,
                op=op,
                not_found=True,
            ) from exc
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(
                f"cannot {op} {rel!r} under {self.root}: {exc}",
                path=rel,
                op=op,
                # pyarrow's S3 file system says so only in the message (CopyObject of a
                # key that is gone, when moving a file another process removed)
                not_found="NO_SUCH_KEY" in str(exc),
            ) from exc
