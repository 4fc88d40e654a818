-- Observed components go with the kind; a tool that had some keeps, until its next
-- enrichment or a re-weight of each profile, a vector that included them.
DROP INDEX IF EXISTS search_labels_created;
DROP INDEX IF EXISTS search_labels_tool;
DROP TABLE IF EXISTS observed_query_sweep;
DROP TABLE IF EXISTS observed_query_forgets;
DELETE FROM tool_components WHERE kind = 'observed';
UPDATE vector_sets SET weights = weights - 'observed' WHERE weights ? 'observed';
UPDATE weight_profiles SET weights = weights - 'observed' WHERE weights ? 'observed';
