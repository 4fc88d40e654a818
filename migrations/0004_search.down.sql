DROP VIEW IF EXISTS search_slowest, search_profile_quality, search_used_rank,
    search_tool_popularity, search_low_score_queries, search_zero_result_queries, search_daily;
DROP TRIGGER IF EXISTS tool_components_lexical_insert ON tool_components;
DROP TRIGGER IF EXISTS tool_components_lexical_update ON tool_components;
DROP TRIGGER IF EXISTS tool_components_lexical_delete ON tool_components;
DROP TRIGGER IF EXISTS tools_lexical_insert ON tools;
DROP TRIGGER IF EXISTS tools_lexical_update ON tools;
DROP TRIGGER IF EXISTS tools_lexical_delete ON tools;
DROP FUNCTION IF EXISTS toolgate_components_lexical();
DROP FUNCTION IF EXISTS toolgate_tools_lexical();
DROP FUNCTION IF EXISTS toolgate_search_reindex();
DROP FUNCTION IF EXISTS toolgate_search_refresh(bigint[]);
DROP TABLE IF EXISTS search_corpus, search_lexemes, search_postings, search_docs;
DROP FUNCTION IF EXISTS toolgate_field_weight(text);
DROP FUNCTION IF EXISTS toolgate_name_key(text);
