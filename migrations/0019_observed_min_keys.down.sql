ALTER TABLE observed_query_sweep DROP COLUMN IF EXISTS min_keys;
