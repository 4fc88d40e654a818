-- name: ListSearchRules :many
-- The curation rules (docs/curations.md), oldest first.
SELECT * FROM search_rules ORDER BY id;

-- name: InsertSearchRule :one
INSERT INTO search_rules (tenant, match, pattern, action, tool, boost, position, created_by)
VALUES (sqlc.narg(tenant)::text, sqlc.arg(match)::text, sqlc.arg(pattern)::text, sqlc.arg(action)::text,
        sqlc.arg(tool)::text, sqlc.narg(boost)::float8, sqlc.narg(position)::int, sqlc.narg(created_by)::text)
RETURNING *;

-- name: DeleteSearchRule :execrows
DELETE FROM search_rules WHERE id = $1;

-- name: ListSearchSynonyms :many
SELECT * FROM search_synonyms ORDER BY tenant NULLS FIRST, word;

-- name: PutSearchSynonym :one
-- A word's synonyms for a tenant (NULL: every search), replacing the ones it had.
INSERT INTO search_synonyms (tenant, word, synonyms, created_by)
VALUES (sqlc.narg(tenant)::text, sqlc.arg(word)::text, sqlc.arg(synonyms)::text[], sqlc.narg(created_by)::text)
ON CONFLICT (tenant, word) DO UPDATE
SET synonyms = excluded.synonyms, created_at = now(), created_by = excluded.created_by
RETURNING *;

-- name: DeleteSearchSynonym :execrows
DELETE FROM search_synonyms WHERE id = $1;

-- name: SearchRuleWords :one
-- The words a rule's pattern is compared by (toolgate_rule_words): none, and the rule could
-- never match.
SELECT toolgate_rule_words(sqlc.arg(pattern)::text)::text[] AS words;

-- name: SetToolExpansionOff :one
-- The tool's knowledge expansion switch; its next enrichment applies it.
UPDATE tools SET expansion_off = sqlc.arg(off)::boolean, updated_at = now()
WHERE name = sqlc.arg(name)::text
RETURNING id;
