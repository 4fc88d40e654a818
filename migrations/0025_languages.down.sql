-- Back to English documents: the functions that read the language go (an older
-- sql/functions/lexical.sql creates toolgate_search_document again, with its own columns),
-- and every tool is indexed again by the older functions.
DROP FUNCTION IF EXISTS toolgate_search_document(bigint[]);
DROP FUNCTION IF EXISTS toolgate_query_lexemes(text);
DROP FUNCTION IF EXISTS toolgate_field_vector(regconfig, text, text);
DROP FUNCTION IF EXISTS toolgate_detect_language(text);
ALTER TABLE search_docs DROP COLUMN language;
DROP TABLE search_languages;
DROP TABLE search_stopwords;
INSERT INTO search_queue (tool_id) SELECT id FROM tools;
