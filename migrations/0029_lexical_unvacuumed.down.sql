ALTER TABLE search_corpus DROP COLUMN unvacuumed;
