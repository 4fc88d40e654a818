ALTER TABLE tools DROP COLUMN expansion_off;
DROP TABLE search_synonyms;
DROP TABLE search_rules;
