-- Implicit labels (issue 18): which tool an agent chose among the results of a search.
--
-- A label says "after search_id, the agent used tool_name, which that search ranked `rank`".
-- label_source 'call': the MCP gateway saw the session that made the search call the tool
-- (by name, as a bound tool, or through call_tool) within TOOLGATE_MCP_LABEL_WINDOW of the
-- search; only searches of the same session and the same caller are labelled, and of
-- several such searches that returned the tool, the most recent. label_source 'feedback':
-- an explicit POST /search/{id}/feedback row, copied by the trigger below, so that one table
-- holds every label whatever its origin.
--
-- No foreign key to search_log, as for search_feedback: search_log is partitioned by month
-- and its old partitions are dropped, which a foreign key would forbid. search_created_at
-- is the search row's partition key, so that a join to search_log prunes partitions and
-- toolgate_drop_search_log_partitions deletes the labels of the partitions it drops.
CREATE TABLE search_labels (
    search_id         bigint NOT NULL,
    search_created_at timestamptz NOT NULL,
    tool_name         text NOT NULL,
    label_source      text NOT NULL CHECK (label_source IN ('call', 'feedback')),
    -- the tool's 1-based position in the search's results (search_log.results)
    rank              integer NOT NULL CHECK (rank >= 1),
    -- from the search to the call (or to the feedback)
    delay_ms          bigint NOT NULL CHECK (delay_ms >= 0),
    -- the tool's source, when the label was written
    tool_source       text,
    -- call: whether a call of the tool after the search answered without error (true once
    -- any such call did); feedback: the agent's report.
    success           boolean,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (search_id, tool_name, label_source)
);
CREATE INDEX search_labels_search_created ON search_labels (search_created_at);

-- Explicit feedback is a label too. The feedback path (RecordFeedback) already checked that
-- the caller made the search and that the search returned the tool.
CREATE FUNCTION toolgate_feedback_label() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms,
                               tool_source, success, created_at)
    SELECT l.id, l.created_at, n.tool_name, 'feedback', r.pos,
           greatest(0, floor(extract(epoch FROM n.created_at - l.created_at) * 1000))::bigint,
           (SELECT s.name FROM tools t JOIN sources s ON s.id = t.source_id WHERE t.name = n.tool_name),
           n.success, n.created_at
    FROM new_rows n
    JOIN search_log l ON l.id = n.search_id
    CROSS JOIN LATERAL (
        SELECT e.pos FROM jsonb_array_elements(l.results) WITH ORDINALITY AS e (value, pos)
        WHERE e.value ->> 'name' = n.tool_name
        ORDER BY e.pos LIMIT 1
    ) r
    ON CONFLICT (search_id, tool_name, label_source) DO UPDATE
        SET success = EXCLUDED.success, created_at = EXCLUDED.created_at,
            delay_ms = EXCLUDED.delay_ms;
    RETURN NULL;
END $$;
CREATE TRIGGER search_feedback_label AFTER INSERT ON search_feedback
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_feedback_label();

-- Dropping a month of the retrieval log drops its labels too.
CREATE OR REPLACE FUNCTION toolgate_drop_search_log_partitions(keep interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    r       record;
    dropped integer := 0;
BEGIN
    FOR r IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'search_log'::regclass
          AND c.relname ~ '^search_log_[0-9]{6}$'
          AND (to_date(substr(c.relname, 12), 'YYYYMM') + interval '1 month') <= now() - keep
    LOOP
        EXECUTE format('DROP TABLE %I', r.relname);
        EXECUTE format('DELETE FROM search_labels WHERE search_created_at >= %L AND search_created_at < %L',
                       to_date(substr(r.relname, 12), 'YYYYMM'),
                       to_date(substr(r.relname, 12), 'YYYYMM') + interval '1 month');
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

-- Label rate and the rank of the chosen tool, per day of the search, weight profile and
-- label source ('call', 'feedback', and 'any': a search labelled by either counts once).
-- searches: searches of that day and profile; labelled: those with at least one label of
-- that source; label_rate = labelled / searches. mean_rank, median_rank and mrr are over
-- the labels (a search may have several), median_delay_ms from search to call.
CREATE VIEW search_label_stats AS
WITH searches AS (
    SELECT date_trunc('day', created_at)::date AS day, coalesce(profile, '(active)') AS profile,
           count(*) AS searches
    FROM search_log
    GROUP BY 1, 2
), labels AS (
    SELECT date_trunc('day', l.created_at)::date AS day, coalesce(l.profile, '(active)') AS profile,
           coalesce(x.label_source, 'any') AS label_source,
           count(DISTINCT x.search_id) AS labelled, count(*) AS labels,
           avg(x.rank) AS mean_rank,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.rank) AS median_rank,
           avg(1.0 / x.rank) AS mrr,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY x.delay_ms) AS median_delay_ms
    FROM search_labels x
    JOIN search_log l ON l.id = x.search_id AND l.created_at = x.search_created_at
    GROUP BY GROUPING SETS ((date_trunc('day', l.created_at)::date, coalesce(l.profile, '(active)'), x.label_source),
                            (date_trunc('day', l.created_at)::date, coalesce(l.profile, '(active)')))
)
SELECT s.day, s.profile, b.label_source, s.searches, b.labelled,
       round(b.labelled::numeric / s.searches, 4) AS label_rate,
       b.labels,
       round(b.mean_rank, 2) AS mean_rank,
       round(b.median_rank::numeric, 1) AS median_rank,
       round(b.mrr, 4) AS mrr,
       round(b.median_delay_ms::numeric) AS median_delay_ms
FROM searches s
JOIN labels b ON b.day = s.day AND b.profile = s.profile;
