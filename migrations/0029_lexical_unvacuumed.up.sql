-- The tools a catalog write indexed without the indexer's upkeep (lexical.Index: an import,
-- a PUT of a catalog): the next flush (the lexical_index job) counts them toward its vacuum
-- of the index tables as if it had indexed them itself.
ALTER TABLE search_corpus ADD COLUMN unvacuumed integer NOT NULL DEFAULT 0;
