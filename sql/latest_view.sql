-- The latest version of every record of a version-partition table.
--
-- {data}:  the snapshot's data rows, with the partition columns and `version_id` taken from
--          each file's path (<partition>/version_id=V/part-*.parquet).
-- {index}: the snapshot's version-index entries (_index/<partition>/version_id=V/index-*),
--          one per key a version updated or deleted while the key may have existed before.
--
-- A row of version v is the latest of its key unless an index entry of a higher version
-- exists for that key. Deleted keys have an entry and no row of that version, so they vanish.
-- The index entries are joined as they are (no aggregation, no shuffle): a key has one entry
-- per version that rewrote it, and the anti join only asks whether a higher one exists.
-- {hint} is /*+ BROADCAST(m) */ while the index is small enough, else empty (a shuffle
-- join; the table then needs compaction).
SELECT {hint} {columns}
FROM {data} d
LEFT ANTI JOIN (
    SELECT {key_columns}, version_id
    FROM {index}
) m
ON {join_condition} AND m.version_id > d.version_id
