ALTER TABLE search_log DROP COLUMN caller_key_id;
