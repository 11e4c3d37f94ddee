-- The latest version of every record of a version-partition table.
--
-- {data}:  the snapshot's data rows, with the partition columns and `version_id` taken from
--          each file's path (<partition>/version_id=V/part-*.parquet).
-- {index}: the snapshot's version-index entries (_index/<partition>/version_id=V/index-*),
--          one per key a version updated or deleted while the key may have existed before.
--
-- A row of version v is the latest of its key unless an index entry of a higher version
-- exists for that key. Deleted keys have an entry and no row of that version, so they vanish.
-- The index entries are joined as they are (no aggregation, so no shuffle): the anti join
-- only asks whether a higher one exists.
-- Both sides are joined on one 64-bit hash of the partition and key columns (Spark's
-- xxhash64 hashes -0.0 as 0.0 and every NaN alike, as its equality compares them), so Spark
-- builds its map for a single long key whatever the key's shape; {exact_match} compares the
-- columns themselves, so a hash collision never drops a row.
-- {hint} is /*+ BROADCAST(m) */ while the index is small enough, else empty (a shuffle
-- join; the table then needs compaction).
SELECT {hint} {columns}
FROM (SELECT *, xxhash64({key_columns}) AS `__key_hash` FROM {data}) d
LEFT ANTI JOIN (
    SELECT {key_columns}, version_id, xxhash64({key_columns}) AS `__key_hash`
    FROM {index}
) m
ON d.`__key_hash` = m.`__key_hash`
AND IF({exact_match}, m.version_id, -1) > d.version_id
