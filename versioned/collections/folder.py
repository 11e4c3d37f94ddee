"""Opening a collection folder: its metadata file, and the files it lists, as untrusted input.

Every path is resolved through `FileIO.resolve_inside` rooted at the folder, so a listed path
that is absolute, climbs with ``..`` or resolves through a symlink to outside the folder is
refused before anything reads it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from versioned.collections.errors import CollectionError, IncompleteCollectionError
from versioned.collections.metadata import (
    MAX_METADATA_BYTES,
    METADATA_FILE,
    CollectionFile,
    CollectionMetadata,
)
from versioned.errors import StorageError, UnsafePathError
from versioned.storage.filesystem import FileIO


@dataclass(frozen=True)
class CollectionFolder:
    """A collection folder and its parsed metadata.

    Attributes:
        fileio: File access confined to the folder.
        metadata: The validated metadata.
    """

    fileio: FileIO
    metadata: CollectionMetadata

    @property
    def location(self) -> str:
        """The folder's path or URI."""
        return self.fileio.root

    @classmethod
    def open(cls, path: str) -> CollectionFolder:
        """Open the collection at ``path`` (a local directory or a URI) and parse its metadata.

        Raises:
            CollectionError: No folder at ``path``.
            IncompleteCollectionError: The folder has no metadata file.
            CollectionFormatError: The metadata is of an unknown format version.
            CollectionError: The metadata is malformed.
            UnsafePathError: The metadata file is a symlink to outside the folder.
        """
        if not isinstance(path, str) or not path:
            raise CollectionError("a collection path is required")
        fileio = FileIO.for_root(path)
        if not fileio.exists(""):
            raise CollectionError(f"no collection at {fileio.root}: the folder does not exist")
        if not fileio.exists(METADATA_FILE):
            raise IncompleteCollectionError(
                f"{fileio.root} has no {METADATA_FILE}: it is not a collection, or the export "
                "or write that made it did not finish (the metadata file is written last). "
                "Export or write it again into an empty folder",
                path=fileio.root,
            )
        size = fileio.size(METADATA_FILE)
        if size > MAX_METADATA_BYTES:
            raise CollectionError(
                f"{fileio.root}/{METADATA_FILE} is {size} bytes, more than the "
                f"{MAX_METADATA_BYTES} this release reads",
                path=fileio.root,
            )
        data = fileio.read_bytes(METADATA_FILE)
        metadata = CollectionMetadata.from_json(data, where=f"{fileio.root}/{METADATA_FILE}")
        return cls(fileio, metadata)

    def check_files(self) -> None:
        """Check that every listed file is inside the folder and has its listed size.

        Raises:
            UnsafePathError: A listed path resolves to outside the folder (symlink).
            CollectionError: A listed file is missing or of another size.
        """
        for f in self.metadata.files:
            self.check_file(f)

    def check_file(self, f: CollectionFile) -> None:
        """`check_files` for one file."""
        try:
            self.fileio.resolve_inside(f.path)
        except UnsafePathError as exc:
            raise UnsafePathError(
                f"collection {self.location}: listed file {exc.message}; nothing was read",
                path=f.path,
            ) from exc
        try:
            size = self.fileio.size(f.path)
        except StorageError as exc:
            raise CollectionError(
                f"collection {self.location}: listed file {f.path!r} is missing or unreadable: "
                f"{exc}",
                path=f.path,
            ) from exc
        if size != f.size_bytes:
            raise CollectionError(
                f"collection {self.location}: file {f.path!r} is {size} bytes but the metadata "
                f"says {f.size_bytes}: the collection was changed or truncated after it was "
                "written",
                path=f.path,
            )


def read_metadata(path: str | os.PathLike[str]) -> CollectionMetadata:
    """The validated metadata of the collection at ``path`` (no Spark needed)."""
    return CollectionFolder.open(os.fspath(path)).metadata
