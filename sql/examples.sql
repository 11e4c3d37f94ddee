-- Example queries over the latest-version views (run with `versioned sql "..."`, or in
-- Spark after `catalog.register_views(spark)`).

-- Sales per store, latest state of every sale.
SELECT store_id, COUNT(*) AS sales, ROUND(SUM(total_amt), 2) AS revenue
FROM test.sell
GROUP BY store_id
ORDER BY store_id;

-- One sale's latest state.
SELECT * FROM test.sell WHERE sell_id = 3;

-- Open sales of one store and day (partition pruning on store_id and create_date).
SELECT sell_id, status_id, total_amt
FROM test.sell
WHERE store_id = '1' AND create_date = '2024-01-01' AND status_id = 'open';
