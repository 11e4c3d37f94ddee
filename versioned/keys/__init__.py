"""Key machinery every layout uses: key encoding, Bloom filters, key ranges, stats,
latest-per-key (plain Python and pyarrow, below the layouts)."""
