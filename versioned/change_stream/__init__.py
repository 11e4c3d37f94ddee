"""A table's committed changes as a Structured Streaming source (``format("versioned")``).

`source` is the PySpark Python data source; `commit_tasks` plans a micro-batch on the
driver from the catalog's change log; `version_images` and `acid_images` read each commit's
pre- and post-images with pyarrow on the executors; `change_rows` turns them into change
rows. Nothing here needs a SparkSession (see ``docs/change-stream.md``).
"""
