-- The lexical index splits Chinese, Japanese and Korean text into character pairs
-- (toolgate_cjk_bigrams, sql/functions/lexical.sql): the tools whose documents hold such
-- text are indexed again by the indexer, after this migration, with the new function.
INSERT INTO search_queue (tool_id)
SELECT t.id FROM tools t
WHERE (coalesce(t.title, '') || ' ' || t.description || ' ' || t.input_schema::text)
          ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]'
   OR EXISTS (SELECT 1 FROM tool_components c
              WHERE c.tool_id = t.id
                AND c.text ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]');
