"""Reading a collection without any catalog (Howl's HIEInputFormat / HIELoader)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from versioned.collections.folder import CollectionFolder
from versioned.collections.metadata import CollectionMetadata

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read(spark: SparkSession, path: str | os.PathLike[str]) -> DataFrame:
    """The rows of the collection at ``path``, with its partition columns restored.

    Columns come in the metadata's order with its types. Only the files the metadata lists
    are read, after checking that each is inside the folder and has its listed size.

    Raises:
        IncompleteCollectionError: ``path`` has no metadata file (not a collection, or a
            write that did not finish).
        CollectionError: The metadata is malformed or a listed file is missing or changed.
        UnsafePathError: A listed file resolves to outside the folder.
    """
    from versioned.engine.spark.collection_reader import read_collection

    folder = CollectionFolder.open(os.fspath(path))
    folder.check_files()
    return read_collection(spark, folder)


def read_metadata(path: str | os.PathLike[str]) -> CollectionMetadata:
    """The validated metadata of the collection at ``path`` (no Spark needed)."""
    return CollectionFolder.open(os.fspath(path)).metadata
