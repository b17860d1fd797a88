"""grpo-data: dataset preparation (verl parquet, miles JSONL), weighted mixing and an audited holdout."""
