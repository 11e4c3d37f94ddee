"""Layout 2, Hive ACID: the on-storage format (names, bucket hash, ROW__IDs, ORC files).

Its format here in plain Python, pyarrow, numpy and pyorc; its Spark writer, reader and
compactor in `engine/`, its ingest sink, change images and mutation format beside them; the
registry knows it by `layout.LAYOUT`. Facts followed: ``hive-bucketing.md`` and Hive's
``AcidUtils``, ``OrcRecordUpdater``, ``BucketCodec``, ``ValidReaderWriteIdList`` and
``OrcAcidUtils``.

This package re-exports nothing: its modules are imported by name, so registering the layout
(`layout.LAYOUT`) imports nothing else of it.
"""
