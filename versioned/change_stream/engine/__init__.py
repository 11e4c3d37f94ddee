"""The change stream's Spark face: a PySpark streaming data source (the only Spark code here)."""
