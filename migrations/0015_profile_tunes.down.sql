ALTER TABLE weight_profiles DROP COLUMN tune_id;
DROP TABLE profile_tunes;
