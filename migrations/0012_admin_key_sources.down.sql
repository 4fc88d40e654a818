-- The keys made search keys by the up migration stay search keys.
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_admin_every_source;
