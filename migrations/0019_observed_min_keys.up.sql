-- The trust rule of observed queries (docs/enrichment.md#observed-queries): a query becomes
-- an observed component only once enough distinct API keys searched it
-- (TOOLGATE_OBSERVED_MIN_KEYS). min_keys is the threshold the last finished sweep applied;
-- a sweep under another one (NULL: none yet, as after this upgrade) refreshes every tool
-- that has observed queries, labelled since or not, so that those chosen under an older
-- rule are chosen again under the current one.
ALTER TABLE observed_query_sweep ADD COLUMN min_keys integer CHECK (min_keys > 0);
