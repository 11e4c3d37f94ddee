"""Hive's HCatalog streaming ingest API in Python: records pumped into a table partition in
small committed transactions, written straight to files (no Spark), with the catalog deciding
visibility. See issue 13 and ``seeds/hive-streaming-ingest-api.txt``.
"""
