ALTER TABLE weight_profiles DROP COLUMN weight_lexical, DROP COLUMN weight_vector;
