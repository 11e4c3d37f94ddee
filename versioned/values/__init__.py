"""Column values from text, Spark-free: the rules every feed and client shares
(`text_rules`) and their vectorised form on Arrow arrays (`arrow_text`)."""
