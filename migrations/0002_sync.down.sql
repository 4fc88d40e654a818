ALTER TABLE sync_runs DROP COLUMN pending;
