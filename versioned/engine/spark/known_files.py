"""A Spark scan over files whose paths and sizes the catalog knows, built without asking the
store about them: no listing, no existence check.

``DataFrameReader.load(paths)`` checks that each path exists (``exists``: a HEAD on S3) and
then lists each one as if it were a folder (Hadoop's S3A connector asks ``listStatus`` of a
file with a LIST, then a HEAD), and a ``basePath`` adds a HEAD and a LIST of its own: on an
object store a read of N files costs N LIST and 2N HEAD requests before a task runs. The
snapshot names every file and its size already, so the scan is built from them:

* a private file-status cache (Spark's ``SharedInMemoryCache``) holds the files as the
  listing of the scan's base folder;
* Spark's own file index (``InMemoryFileIndex``) over that folder (and a second root that
  names the file set, `_names_folder`) finds them there, infers the ``k=v`` partition values
  from their paths (typed by the schema given) and lists nothing;
* the scan is Spark's own (``HadoopFsRelation`` with Parquet's or ORC's file format), as
  ``load`` builds it. The executors still open each file (a HEAD, then its GETs).

These are Spark's internal classes (tests run them on PySpark 4.0.5 and 4.3; 4.1 has the same
constructors). Where they are not reachable (a Spark Connect session has no JVM in the
process) or refuse the call, the scan is built by ``load`` instead (`file_scans.load_files`):
the same rows, at the cost of the requests above.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

_CACHE_BYTES = 1 << 30
"""The private cache's bound (its entries are this one scan's files)."""
_BLOCK_SIZE = 128 << 20
"""The block size the file statuses report (Spark's splits use its own max split bytes)."""
_FORMATS = {
    "parquet": "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat",
    "orc": "org.apache.spark.sql.execution.datasources.orc.OrcFileFormat",
}


@dataclass(frozen=True)
class KnownFile:
    """A file of a scan: its path below the scan's base folder, and its size in bytes."""

    path: str
    size: int


class KnownFilesUnavailable(Exception):
    """The scan cannot be built from known files here (the reason is the message)."""


def known_files_frame(
    spark: SparkSession,
    file_format: str,
    schema: T.StructType,
    base: str,
    files: Sequence[KnownFile],
) -> DataFrame:
    """A DataFrame over ``files`` below the folder ``base`` (a URI or path Spark reads),
    typed by ``schema`` (data columns, then the ``k=v`` partition columns of the paths).

    Raises:
        KnownFilesUnavailable: No JVM in this process (Spark Connect), or Spark refused the
            internal classes (another Spark line).
    """
    jvm = getattr(spark, "_jvm", None)
    jsession = getattr(spark, "_jsparkSession", None)
    if jvm is None or jsession is None or file_format not in _FORMATS:
        raise KnownFilesUnavailable("no JVM of Spark's in this process")
    try:
        return _frame(spark, jvm, jsession, file_format, schema, base, files)
    except Exception as exc:  # py4j's errors: a class or constructor this Spark lacks
        raise KnownFilesUnavailable(f"{type(exc).__name__}: {exc}") from exc


def _names_folder(files: Sequence[KnownFile]) -> str:
    """A folder name that stands for the set of ``files``: ``_scan-<digest of their paths>``.

    Spark deems two file indexes equal when their root folders are (``InMemoryFileIndex``'s
    ``equals``), and reuses one scan's output for an equal one in a query (a read of two
    versions of a table, or changes between them): the scans of different file sets must
    differ in their roots. So each scan has this second root, which exists nowhere and is
    never asked for (the cache says it is empty); scans of the same files stay equal.
    """
    digest = hashlib.sha256("\n".join(sorted(f.path for f in files)).encode())
    return f"_scan-{digest.hexdigest()[:32]}"


def _frame(
    spark: SparkSession,
    jvm: Any,
    jsession: Any,
    file_format: str,
    schema: T.StructType,
    base: str,
    files: Sequence[KnownFile],
) -> DataFrame:
    hadoop_fs = jvm.org.apache.hadoop.fs
    sources = jvm.org.apache.spark.sql.execution.datasources
    utils = jvm.org.apache.spark.api.python.PythonUtils
    scala_option = jvm.scala.Option
    conf = jsession.sessionState().newHadoopConf()
    given = hadoop_fs.Path(base)
    root = given.getFileSystem(conf).makeQualified(given)
    prefix = root.toString().rstrip("/")
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    statuses = gateway.new_array(hadoop_fs.FileStatus, len(files))
    for i, f in enumerate(files):
        path = hadoop_fs.Path(f"{prefix}/{f.path}")
        statuses[i] = hadoop_fs.FileStatus(f.size, False, 1, _BLOCK_SIZE, 0, path)
    cache = sources.SharedInMemoryCache(_CACHE_BYTES, -1).createForNewClient()
    cache.putLeafFiles(root, statuses)
    names = hadoop_fs.Path(f"{prefix}/{_names_folder(files)}")
    cache.putLeafFiles(names, gateway.new_array(hadoop_fs.FileStatus, 0))
    options = utils.toScalaMap({})
    full_schema = jsession.parseDataType(schema.json())
    index = sources.InMemoryFileIndex(
        jsession,
        utils.toSeq([root, names]),
        options,
        scala_option.apply(full_schema),
        cache,
        scala_option.empty(),
        scala_option.empty(),
    )
    partition_schema = index.partitionSchema()
    partition_names = set(partition_schema.fieldNames())
    data_fields = [f for f in schema.fields if f.name not in partition_names]
    data_schema = jsession.parseDataType(T.StructType(data_fields).json())
    file_format_class = getattr(jvm, _FORMATS[file_format])
    relation = sources.HadoopFsRelation(
        index,
        partition_schema,
        data_schema,
        scala_option.empty(),
        file_format_class(),
        options,
        jsession,
    )
    return DataFrame(jsession.baseRelationToDataFrame(relation), spark)
