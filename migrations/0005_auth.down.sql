DROP TABLE IF EXISTS api_key_rate;
DROP INDEX IF EXISTS api_keys_active_name;
