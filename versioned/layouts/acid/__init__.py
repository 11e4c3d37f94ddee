"""Layout 2, Hive ACID: the on-storage format (names, bucket hash, ROW__IDs, ORC files)."""
