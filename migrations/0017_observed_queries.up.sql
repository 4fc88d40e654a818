-- Observed queries (issue 18 point 4, docs/enrichment.md#observed-queries): the queries of
-- labelled searches become `observed` components of the tool the agent then used, when
-- TOOLGATE_OBSERVED_QUERIES is above 0.
--
-- Weighted like the synthetic questions: every tdwa profile that weights `question` weights
-- `observed` the same, and so does each of its vector sets (sets keep the weights they were
-- built with, migration 0010). This changes no stored vector: no tool has an observed
-- component yet, and TDWA re-normalizes over the kinds a tool has (tdwa.Combine), so each
-- tool's vector under the new weights is exactly the one it has. concat and mean take no
-- weights and are left alone.
UPDATE weight_profiles
   SET weights = weights || jsonb_build_object('observed', weights -> 'question')
 WHERE strategy = 'tdwa' AND weights ? 'question' AND NOT weights ? 'observed';
UPDATE vector_sets
   SET weights = weights || jsonb_build_object('observed', weights -> 'question')
 WHERE strategy = 'tdwa' AND weights ? 'question' AND NOT weights ? 'observed';

-- The collection job sweeps the labels written since its last run (jobs.ObservedQueriesArgs):
-- labels_until is the database time up to which it has looked (minus a margin for label
-- transactions still in flight, internal/observed); 1970: every label, the first time. A
-- sweep in progress records where it will stop (sweeping_until) and the last tool it
-- refreshed (after_tool), so that a sweep cut short (a timeout, a restart) resumes there.
CREATE TABLE observed_query_sweep (
    singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    labels_until   timestamptz NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    sweeping_until timestamptz,
    after_tool     bigint NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO observed_query_sweep DEFAULT VALUES;
CREATE INDEX search_labels_created ON search_labels (created_at);
-- A tool's labels, for the selection of its observed queries (ObservedQueries).
CREATE INDEX search_labels_tool ON search_labels (tool_name);

-- Removing a source's observed queries (DELETE /v1/sources/{name}/observed-queries) forgets
-- the searches made until then: later refreshes use only the searches after forgotten_at,
-- so what was removed does not come back with the next label.
CREATE TABLE observed_query_forgets (
    source_id    bigint PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    forgotten_at timestamptz NOT NULL
);
