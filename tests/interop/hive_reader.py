"""Reading an acid table with Apache Hive 2.3.10's own reader classes (the ``hive-exec``,
``hive-common`` and ``hive-serde`` jars PySpark ships), through py4j in the shared
SparkSession: no Hive server and no metastore, only the table's folder on disk and a
snapshot's write ids, which Hive 2.3 (from before write ids) takes as transaction ids.

Four ways in, as a Hive 2.3 query or compactor reads:

* `HiveReader.acid_dirs`: the directories ``AcidUtils.getAcidState`` chooses per partition;
* `HiveReader.row_mode`: ``OrcInputFormat.getSplits`` and ``getRecordReader`` (the
  ``OrcRawRecordMerger`` behind an ``AcidRecordReader``), ROW__IDs from the reader's
  ``getRecordIdentifier``;
* `HiveReader.vectorized`: ``VectorizedOrcAcidRowBatchReader`` over the same splits (Hive 2.3's
  vectorized reader has no ROW__ID column, so its rows have none);
* `HiveReader.raw_merge`: ``OrcInputFormat.getRawReader`` per bucket with collapsed events
  (the compactor's merge), delete events dropped, ROW__IDs from the events.

The job configuration is the one Hive's own reader tests set up (e.g.
TestVectorizedOrcAcidRowBatchReader's ``setup``): a transactional table scan,
``transactional_properties=default`` with split-update switched on both in the job conf and
through ``AcidUtils.setAcidOperationalProperties``, the schema in ``columns`` and
``schema.evolution.columns``, the bucket count, and the snapshot as ``ValidReadTxnList``.
Hive 2.3's ``hive-common`` copy of that class must be the one loaded (`check_hive_common_wins`;
the tests' session puts its jar first, tests/support/spark_settings.py).

`HiveBucketHash` computes a row's bucket with Hive's own hash classes:
``ObjectInspectorUtils.getBucketNumber`` (bucketing version 1) and ``Murmur3`` (version 2,
which Hive 2.3 predates: the per-column Murmur3 hashes are combined as Hive 3's
``ObjectInspectorUtils.getBucketHashCode`` does).

Rows come back as `HiveRow` (the table's columns in table order, partition values as the
strings of the folder names, and the ROW__ID), comparable with `table_rows` of
``Table.read(with_row_id=True)``. Values of BOOLEAN, whole-number, FLOAT, DOUBLE and string
columns are supported (what the interop tables use).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4j.java_gateway import get_field
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException

from tests.layouts.acid.engine.hive_walk import partition_folders
from versioned.layouts.acid.directories import parse_bucket_file
from versioned.layouts.acid.orc_schema import acid_orc_schema, orc_type, row_orc_type
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.schema import TableSpec

RowId = tuple[int, int, int]
LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1

_HIVE = "org.apache.hadoop.hive"
_TXN_LIST = f"{_HIVE}.common.ValidReadTxnList"
_WHOLE = {"TINYINT", "SMALLINT", "INT", "BIGINT"}
_FLOATING = {"FLOAT", "DOUBLE"}


class HiveReadError(Exception):
    """A Hive reader class threw: ``what`` was being read; ``java`` is the Java exception and
    its causes, each ``(class name, message)``, outermost first."""

    def __init__(self, what: str, java: tuple[tuple[str, str | None], ...]) -> None:
        self.what = what
        self.java = java
        chain = " <- caused by ".join(f"{name}: {message}" for name, message in java)
        super().__init__(f"Hive 2.3 failed reading {what}: {chain}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.what, self.java))


@contextmanager
def _java_errors(what: str) -> Iterator[None]:
    """Turn a Java exception thrown through py4j into a `HiveReadError` naming its chain."""
    try:
        yield
    except (Py4JJavaError, CapturedException) as error:
        # PySpark turns some Java exceptions (IllegalArgumentException and its subclasses)
        # into its own CapturedException, which keeps the Java one as its origin.
        throwable = error.java_exception if isinstance(error, Py4JJavaError) else error._origin
        chain = []
        while throwable is not None and len(chain) < 8:
            chain.append((str(throwable.getClass().getName()), throwable.getMessage()))
            throwable = throwable.getCause()
        if not chain:
            chain.append((type(error).__name__, str(error)))
        raise HiveReadError(what, tuple(chain)) from None


@dataclass(frozen=True)
class HiveRow:
    """One live row as a reader returns it.

    Attributes:
        values: The table's columns in table order (partition values as path strings).
        row_id: ``(writeid, bucket property, rowid)``; None from the vectorized reader.
        bucket_file: The number of the bucket file the row came from (None if unknown).
    """

    values: tuple[Any, ...]
    row_id: RowId | None = None
    bucket_file: int | None = None


def table_rows(table: Any) -> list[HiveRow]:
    """``Table.read(with_row_id=True)`` as `HiveRow`s (partition values as strings), sorted."""
    parts = set(table.spec.partition_by)
    out = []
    for row in table.read(with_row_id=True).collect():
        d = row.asDict()
        rid = d.pop("ROW__ID")
        values = tuple(
            (None if d[c.name] is None else str(d[c.name])) if c.name in parts else d[c.name]
            for c in table.spec.columns
        )
        out.append(HiveRow(values, (rid.writeid, rid.bucketid, rid.rowid)))
    return sorted(out, key=repr)


_CHECKED: set[int] = set()


def check_hive_common_wins(jvm: Any) -> None:
    """Hive 2.3's readers need ``hive-common``'s ``ValidReadTxnList`` (it has
    ``isValidBase``); ``hive-storage-api``'s copy of the class, which PySpark's jars also
    hold, lacks it. Which copy loads depends on the classpath order.

    Raises:
        RuntimeError: The JVM loaded the other copy.
    """
    if id(jvm) in _CHECKED:
        return
    cls = jvm.java.lang.Class.forName(_TXN_LIST)
    where = str(cls.getProtectionDomain().getCodeSource().getLocation().toString())
    try:
        jvm.org.apache.hadoop.hive.common.ValidReadTxnList().isValidBase(1)
    except Py4JError as error:
        raise RuntimeError(
            f"{_TXN_LIST} was loaded from {where}, not from hive-common-2.3.10.jar; Hive "
            "2.3's AcidUtils would fail with NoSuchMethodError. Put hive-common's jar first "
            "(spark.driver.extraClassPath)"
        ) from error
    _CHECKED.add(id(jvm))


class HiveReader:
    """Hive 2.3's readers over one snapshot of one acid table's folder.

    Args:
        spark: The SparkSession whose JVM holds Hive's classes.
        table_dir: The table's folder on the local file system.
        spec: The table's definition.
        write_ids: The snapshot's write ids (Hive 2.3 reads them as transaction ids).
    """

    def __init__(
        self, spark: Any, table_dir: Path, spec: TableSpec, write_ids: ValidWriteIdList
    ) -> None:
        self._jvm = spark._jvm
        self._gateway = spark.sparkContext._gateway
        check_hive_common_wins(self._jvm)
        self.table_dir = table_dir
        self.spec = spec
        self.write_ids = write_ids
        self.buckets = int(spec.buckets or 1)
        self._columns = spec.data_columns
        self._partitions = {
            ("" if rel == Path(".") else rel.as_posix()): values
            for rel, values in (
                (folder.relative_to(table_dir), values)
                for folder, values in partition_folders(table_dir, spec).items()
            )
        }
        jvm = self._jvm
        types = jvm.org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils
        orc_struct = jvm.org.apache.hadoop.hive.ql.io.orc.OrcStruct
        self._row_inspector = orc_struct.createObjectInspector(
            types.getTypeInfoFromTypeString(row_orc_type(self._columns))
        )
        self._event_inspector = orc_struct.createObjectInspector(
            types.getTypeInfoFromTypeString(acid_orc_schema(self._columns))
        )
        self._mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        self._utils = jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils
        self._acid_utils = jvm.org.apache.hadoop.hive.ql.io.AcidUtils
        self._confs: dict[str, Any] = {}
        self._txns: Any = None

    # the snapshot and the job -------------------------------------------------------------

    def txn_list(self) -> Any:
        """The snapshot as Hive 2.3's ``ValidReadTxnList`` (open and aborted ids are its
        exceptions; a base is valid below the lowest open id)."""
        if self._txns is None:
            self._txns = self._new_txn_list()
        return self._txns

    def _new_txn_list(self) -> Any:
        ids = self.write_ids
        exceptions = sorted({*ids.open_ids, *ids.aborted_ids})
        array = self._gateway.new_array(self._jvm.long, len(exceptions))
        for i, value in enumerate(exceptions):
            array[i] = value
        min_open = min(ids.open_ids) if ids.open_ids else LONG_MAX
        return self._jvm.org.apache.hadoop.hive.common.ValidReadTxnList(
            array, ids.high_water_mark, min_open
        )

    def job_conf(self, partition: str) -> Any:
        """The ``JobConf`` Hive's tests give its ACID readers, over one partition folder
        (one per partition; Hive's readers only read it)."""
        if partition not in self._confs:
            self._confs[partition] = self._new_job_conf(partition)
        return self._confs[partition]

    def _new_job_conf(self, partition: str) -> Any:
        jvm = self._jvm
        conf = jvm.org.apache.hadoop.mapred.JobConf()
        names = ",".join(c.name for c in self._columns)
        types = ":".join(orc_type(c.type) for c in self._columns)
        settings = {
            "columns": names,
            "columns.types": types,
            "schema.evolution.columns": names,
            "schema.evolution.columns.types": types,
            "transactional": "true",
            "transactional_properties": "default",
            "hive.transactional.table.scan": "true",
            "bucket_count": str(self.buckets),
            "hive.txn.valid.txns": self.txn_list().writeToString(),
            "hive.vectorized.execution.enabled": "true",
            "mapreduce.input.fileinputformat.inputdir": self._folder(partition).toString(),
        }
        for key, value in settings.items():
            conf.set(key, value)
        operational = self._acid_utils.AcidOperationalProperties.getDefault()
        assert operational.isSplitUpdate()
        self._acid_utils.setAcidOperationalProperties(conf, operational)
        return conf

    def partitions(self) -> dict[str, tuple[str | None, ...]]:
        """Every partition folder (path relative to the table, ``""`` unpartitioned) and
        its values."""
        return dict(self._partitions)

    @staticmethod
    def _buckets_in(directories: Sequence[str]) -> list[int]:
        found = set()
        for uri in directories:
            folder = Path(uri.removeprefix("file:").removeprefix("//"))
            found |= {
                _bucket_of(f.name)
                for f in folder.iterdir()
                if parse_bucket_file(f.name) is not None
            }
        return sorted(found)

    def _folder(self, partition: str) -> Any:
        path = self.table_dir / partition if partition else self.table_dir
        return self._jvm.org.apache.hadoop.fs.Path(f"file://{path}")

    # readers ---------------------------------------------------------------------------------

    def acid_dirs(self) -> dict[str, tuple[str, ...]]:
        """Per partition (non-empty choices only), the directories ``AcidUtils.getAcidState``
        reads: the base (if any) and the deltas and delete deltas, by name, sorted."""
        out = {}
        for partition in self._partitions:
            with _java_errors(f"the directories of {partition or 'the table'}"):
                state = self._acid_utils.getAcidState(
                    self._folder(partition), self.job_conf(partition), self.txn_list()
                )
                names = [d.getPath().getName() for d in state.getCurrentDirectories()]
                base = state.getBaseDirectory()
                if base is not None:
                    names.append(base.getName())
                if state.getOriginalFiles().size():
                    names.append("<original files>")
            if names:
                out[partition] = tuple(sorted(str(n) for n in names))
        return out

    def row_mode(self) -> list[HiveRow]:
        """The live rows through ``OrcInputFormat``'s splits and row-mode record readers,
        each with the ROW__ID its reader reports and the bucket file of its split."""
        jvm = self._jvm
        rows = []
        for partition, values in self._partitions.items():
            with _java_errors(f"the rows of {partition or 'the table'} (row mode)"):
                conf = self.job_conf(partition)
                fmt = jvm.org.apache.hadoop.hive.ql.io.orc.OrcInputFormat()
                for split in fmt.getSplits(conf, 1):
                    bucket = _bucket_of(split.getPath().getName())
                    reader = fmt.getRecordReader(
                        split, conf, jvm.org.apache.hadoop.mapred.Reporter.NULL
                    )
                    key, value = reader.createKey(), reader.createValue()
                    try:
                        while reader.next(key, value):
                            rid = json.loads(
                                self._mapper.writeValueAsString(reader.getRecordIdentifier())
                            )
                            row_id = (rid["transactionId"], rid["bucketId"], rid["rowId"])
                            data = self._standard(value, self._row_inspector)
                            rows.append(HiveRow(self._values(data, values), row_id, bucket))
                    finally:
                        reader.close()
        return sorted(rows, key=repr)

    def vectorized(self) -> list[HiveRow]:
        """The live rows through ``VectorizedOrcAcidRowBatchReader`` over the same splits
        (no ROW__IDs: Hive 2.3's vectorized ACID reader has no ROW__ID column)."""
        jvm = self._jvm
        orc = jvm.org.apache.hadoop.hive.ql.io.orc
        rows = []
        for partition, values in self._partitions.items():
            with _java_errors(f"the rows of {partition or 'the table'} (vectorized)"):
                conf = self.job_conf(partition)
                fmt = orc.OrcInputFormat()
                for split in fmt.getSplits(conf, 1):
                    bucket = _bucket_of(split.getPath().getName())
                    vector_reader = orc.VectorizedOrcAcidRowBatchReader
                    usable = vector_reader.canCreateVectorizedAcidRowBatchReaderOnSplit
                    assert usable(conf, split), split.toString()
                    reader = orc.VectorizedOrcAcidRowBatchReader(
                        split, conf, jvm.org.apache.hadoop.mapred.Reporter.NULL
                    )
                    # As TestVectorizedOrcAcidRowBatchReader: a batch of the row schema.
                    batch = fmt.getDesiredRowTypeDescr(conf, True, INT_MAX).createRowBatch()
                    batch.setPartitionInfo(len(self._columns), 0)
                    try:
                        while reader.next(None, batch):
                            for data in self._batch_rows(batch):
                                rows.append(HiveRow(self._values(data, values), None, bucket))
                    finally:
                        reader.close()
        return sorted(rows, key=repr)

    def raw_merge(self) -> list[HiveRow]:
        """The live rows through ``OrcInputFormat.getRawReader`` (collapsed events, per
        bucket, over getAcidState's directories), delete events dropped."""
        jvm = self._jvm
        rows = []
        for partition, values in self._partitions.items():
            with _java_errors(f"the events of {partition or 'the table'} (raw merge)"):
                conf = self.job_conf(partition)
                txns = self.txn_list()
                state = self._acid_utils.getAcidState(self._folder(partition), conf, txns)
                deltas = self._acid_utils.getPaths(state.getCurrentDirectories())
                fmt = jvm.org.apache.hadoop.hive.ql.io.orc.OrcInputFormat()
                base = state.getBaseDirectory()
                chosen = [base.toString()] if base is not None else []
                chosen += [d.toString() for d in deltas]
                # As Hive's compactor asks: the buckets that have a file in a chosen directory
                # (getRawReader opens the base's file of the bucket, which a bucket whose rows
                # were all deleted before a major compaction does not have).
                for bucket in self._buckets_in(chosen):
                    raw = fmt.getRawReader(conf, True, bucket, txns, base, deltas)
                    key, value = raw.createKey(), raw.createValue()
                    try:
                        while raw.next(key, value):
                            if raw.isDelete(value):
                                continue
                            event = self._standard(value, self._event_inspector)
                            row_id = (event[1], event[2], event[3])
                            rows.append(HiveRow(self._values(event[5], values), row_id, bucket))
                    finally:
                        raw.close()
        return sorted(rows, key=repr)

    # conversions -----------------------------------------------------------------------------

    def _standard(self, value: Any, inspector: Any) -> Any:
        """A Hive object as plain Python (through Java's standard objects and Jackson)."""
        java = self._utils.copyToStandardJavaObject(value, inspector)
        return json.loads(self._mapper.writeValueAsString(java))

    def _values(self, data: Sequence[Any], partition: tuple[str | None, ...]) -> tuple[Any, ...]:
        by_name = {c.name: _typed(v, c.type) for c, v in zip(self._columns, data, strict=True)}
        by_name.update(zip(self.spec.partition_by, partition, strict=True))
        return tuple(by_name[c.name] for c in self.spec.columns)

    def _batch_rows(self, batch: Any) -> list[tuple[Any, ...]]:
        """The selected rows of a ``VectorizedRowBatch`` (one column vector at a time)."""
        arrays = self._jvm.java.util.Arrays
        size = get_field(batch, "size")
        if not size:
            return []
        rows = list(range(size))
        if get_field(batch, "selectedInUse"):
            rows = json.loads(arrays.toString(get_field(batch, "selected")))[:size]
        cols = get_field(batch, "cols")
        columns = [
            self._vector_values(cols[i], column.type, rows)
            for i, column in enumerate(self._columns)
        ]
        return list(zip(*columns, strict=True))

    def _vector_values(self, vector: Any, type_: str, rows: list[int]) -> list[Any]:
        arrays = self._jvm.java.util.Arrays
        repeating = get_field(vector, "isRepeating")
        nulls = (
            None
            if get_field(vector, "noNulls")
            else json.loads(arrays.toString(get_field(vector, "isNull")))
        )
        at = [0 if repeating else r for r in rows]
        name = vector.getClass().getSimpleName()
        if name in ("LongColumnVector", "DoubleColumnVector"):
            flat = json.loads(arrays.toString(get_field(vector, "vector")))
            found = [flat[i] for i in at]
        elif name == "BytesColumnVector":
            starts = json.loads(arrays.toString(get_field(vector, "start")))
            lengths = json.loads(arrays.toString(get_field(vector, "length")))
            data = get_field(vector, "vector")
            found = []
            for i in at:
                if nulls is not None and nulls[i]:
                    found.append(None)
                    continue
                buffer = bytes(data[i])
                found.append(buffer[starts[i] : starts[i] + lengths[i]].decode())
        else:
            raise TypeError(f"no conversion of {name} ({type_}) in the interop reader")
        return [
            None if nulls is not None and nulls[i] else _typed(v, type_)
            for i, v in zip(at, found, strict=True)
        ]


def _typed(value: Any, type_: str) -> Any:
    """A reader's plain value as ``Table.read`` returns the column's type."""
    if value is None:
        return None
    name = type_.upper()
    if name == "BOOLEAN":
        return bool(value)
    if name in _WHOLE:
        return int(value)
    if name == "FLOAT":
        return struct.unpack("f", struct.pack("f", value))[0]
    if name == "DOUBLE":
        return float(value)
    return value


def _bucket_of(file_name: str) -> int:
    parsed = parse_bucket_file(str(file_name))
    assert parsed is not None, file_name
    return parsed.bucket_id


class HiveBucketHash:
    """A row's bucket by Hive's own hash classes, for the table's bucketing version.

    Version 1: ``ObjectInspectorUtils.getBucketHashCode`` over writable object inspectors.
    Version 2: ``Murmur3.hash32`` (seed 104729) of each column's bytes (big-endian numbers,
    UTF-8 strings; booleans and TINYINT hash to their value, NULL to 0), combined as
    ``31 * h + f`` (Hive 3's ``getBucketHashCode``). Either way the bucket is Hive's
    ``ObjectInspectorUtils.getBucketNumber(hash, buckets)``.
    """

    _WRITABLES = {
        "BOOLEAN": ("org.apache.hadoop.io.BooleanWritable", "writableBooleanObjectInspector"),
        "TINYINT": (f"{_HIVE}.serde2.io.ByteWritable", "writableByteObjectInspector"),
        "SMALLINT": (f"{_HIVE}.serde2.io.ShortWritable", "writableShortObjectInspector"),
        "INT": ("org.apache.hadoop.io.IntWritable", "writableIntObjectInspector"),
        "BIGINT": ("org.apache.hadoop.io.LongWritable", "writableLongObjectInspector"),
        "STRING": ("org.apache.hadoop.io.Text", "writableStringObjectInspector"),
    }
    _PACK = {"SMALLINT": ">h", "INT": ">i", "BIGINT": ">q"}

    def __init__(self, spark: Any, spec: TableSpec, version: int) -> None:
        self._jvm = spark._jvm
        self._gateway = spark.sparkContext._gateway
        self.columns = list(spec.bucket_by)
        self.types = [spec.column(c).type.upper() for c in self.columns]
        self.buckets = int(spec.buckets or 1)
        self.version = version
        self._buckets: dict[tuple[Any, ...], int] = {}
        unknown = [t for t in self.types if t not in self._WRITABLES]
        if unknown:
            raise TypeError(f"no Hive hash call for bucket column types {unknown}")

    def bucket(self, row: Mapping[str, Any]) -> int:
        """The bucket of a row (a mapping holding the bucket columns): Hive's
        ``ObjectInspectorUtils.getBucketNumber(hash, buckets)`` of `hash`."""
        if not self.columns:
            return 0
        values = tuple(row[c] for c in self.columns)
        if values not in self._buckets:  # tables repeat keys across files: ask Hive once
            utils = self._jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils
            self._buckets[values] = int(utils.getBucketNumber(self.hash(row), self.buckets))
        return self._buckets[values]

    def hash(self, row: Mapping[str, Any]) -> int:
        """The row's bucket hash over the bucket columns, by the table's version."""
        values = [row[c] for c in self.columns]
        if self.version == 1:
            return self._v1(values)
        h = 0
        for value, type_ in zip(values, self.types, strict=True):
            h = _int32(31 * h + self._murmur(value, type_))
        return h

    def _v1(self, values: list[Any]) -> int:
        """``ObjectInspectorUtils.getBucketHashCode`` over writable object inspectors."""
        jvm = self._jvm
        factory = jvm.org.apache.hadoop.hive.serde2.objectinspector.primitive
        fields = self._gateway.new_array(jvm.java.lang.Object, len(values))
        inspectors = self._gateway.new_array(
            jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector, len(values)
        )
        for i, (value, type_) in enumerate(zip(values, self.types, strict=True)):
            cls, inspector = self._WRITABLES[type_]
            if value is not None:
                fields[i] = self._jvm_class(cls)(value)
            inspectors[i] = getattr(factory.PrimitiveObjectInspectorFactory, inspector)
        utils = jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils
        return int(utils.getBucketHashCode(fields, inspectors))

    def _jvm_class(self, name: str) -> Any:
        target = self._jvm
        for part in name.split("."):
            target = getattr(target, part)
        return target

    def _murmur(self, value: Any, type_: str) -> int:
        if value is None:
            return 0
        if type_ == "BOOLEAN":
            return 1 if value else 0
        if type_ == "TINYINT":
            return int(value)
        data = value.encode() if type_ == "STRING" else struct.pack(self._PACK[type_], value)
        murmur = self._jvm.org.apache.hive.common.util.Murmur3
        return int(murmur.hash32(bytearray(data), len(data), 104729))


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
