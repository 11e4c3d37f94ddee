"""Layout 1, version partitions (the value users type: ``versioned``): everything this layout is.

Its on-storage format here in plain Python and pyarrow (paths, index, probes, compaction
planning), its Spark writer, reader and compactor in `engine/`, its ingest sink, change images
and import by copy beside them; the registry knows it by `layout.LAYOUT`.

This package re-exports nothing: its modules are imported by name, so registering the layout
(`layout.LAYOUT`) imports nothing else of it.
"""
