-- The lexical analysis reads names it could not see (sql/functions/lexical.sql): "AT&T" and
-- the initials of a tool's name (get_at_t_revenue) are one word, legal-form abbreviations
-- ("Inc.", "Corp.", "Ltd", "GmbH", ...) none. Every tool is indexed again, with the new
-- functions, by the indexer after this migration.
INSERT INTO search_queue (tool_id) SELECT id FROM tools ORDER BY id;
