"""Benchmarks of versioned against its peers (delta-rs, pyiceberg, plain Spark).

``python -m benchmarks list`` names every scenario; ``python -m benchmarks run NAME --size
smoke|1M|10M`` runs one (``benchmarks/README.md``).
"""
