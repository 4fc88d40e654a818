-- A ready vector set may have its HNSW index deferred (docs/profiles.md, "Deferred indexes"):
-- the first sets of the profiles that are not active, made while a new catalog is enriched,
-- receive every enriched tool's vector without an index, and the vector_index job builds
-- the index in one CREATE INDEX once the enrichment burst is over. Until then the set is
-- complete and searched exactly. Existing sets all have their index.
ALTER TABLE vector_sets ADD COLUMN index_deferred boolean NOT NULL DEFAULT false;
