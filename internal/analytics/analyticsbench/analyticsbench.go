// Package analyticsbench seeds the retrieval log the analytics benchmark reads (toolgate
// bench analytics): a catalog of sources and tools, searches spread over the last days with
// the mix of a gateway serving agents, and the labels of about a tenth of them, written in
// a few set-based statements (generate_series, no API call) so that a million searches
// take about a minute.
//
// The mix: 65% of the searches come from find_tools (hybrid, k 5, each MCP session making
// eight) and 35% from POST /search (k 10; 85% hybrid, 10% lexical, 5% vector; 15% filtered
// by a source, 5% by a tag). About 6% find nothing (more of the filtered ones). Queries
// follow a skewed distribution over 30,000 texts (a few are asked very often), results a
// skewed one over the tools (many are never returned). The default profile served the
// first two thirds of the period, a second profile ("tuned") the rest. 11% of the searches
// with results are labelled: by a call for find_tools, by feedback for POST /search, the
// chosen tool first in 60% of them.
package analyticsbench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sources is the number of sources the tools are spread over.
const Sources = 100

// Seed fills pool's migrated, empty database with tools tools, searches searches over the
// last days days and their labels, then analyzes the tables. logf reports progress.
func Seed(ctx context.Context, pool *pgxpool.Pool, tools, searches, days int, logf func(format string, args ...any)) error {
	t0 := time.Now()
	if err := Partitions(ctx, pool, days); err != nil {
		return err
	}
	lists := min(20000, max(100, searches/10))
	// Raw SQL: the benchmark's own data, set-based; each statement is commented.
	steps := []struct {
		what string
		sql  string
		args []any
	}{
		{"sources", `INSERT INTO sources (name, kind)
			SELECT 'src' || lpad(i::text, 3, '0'), 'catalog' FROM generate_series(0, $1::int - 1) i`, []any{Sources}},
		// tool i of source i % Sources: src007__tool_107
		{"tools", `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
			SELECT s.id, s.name || '__tool_' || i, 'tool_' || i, 'Tool number ' || i || '.', '{"type":"object"}', md5(i::text)
			FROM generate_series(0, $1::int - 1) i
			JOIN sources s ON s.name = 'src' || lpad((i % $2::int)::text, 3, '0')`, []any{tools, Sources}},
		{"profile", `INSERT INTO weight_profiles (name, strategy) VALUES ('tuned', 'tdwa') ON CONFLICT (name) DO NOTHING`, nil},
		{"result lists", seedResultLists, []any{tools, Sources, lists}},
		{"searches", seedSearches, []any{searches, days, Sources, lists}},
		{"sequence", `SELECT setval('search_log_id_seq', $1::bigint)`, []any{searches}},
		{"labels", seedLabels, nil},
		{"drop result lists", `DROP TABLE bench_results`, nil},
		{"analyze", `ANALYZE sources, tools, search_log, search_labels`, nil},
	}
	conn, err := pool.Acquire(ctx) // the temporary table lives on one connection
	if err != nil {
		return err
	}
	defer conn.Release()
	for _, s := range steps {
		t := time.Now()
		tag, err := conn.Exec(ctx, s.sql, s.args...)
		if err != nil {
			return fmt.Errorf("seed %s: %w", s.what, err)
		}
		logf("%s: %d rows in %s", s.what, tag.RowsAffected(), time.Since(t).Round(time.Millisecond))
	}
	logf("seeded in %s", time.Since(t0).Round(time.Second))
	return nil
}

// seedResultLists draws the result lists for each k ($3: a tenth of the searches, 100 to
// 20,000), once: each search takes one. A result's tool (of $1, sources $2) is drawn with
// a skew toward the low numbers (random()^2.5), its branch ranks are missing now and then
// (10% lexical, 15% vector), its BM25 anywhere in [0, 15).
const seedResultLists = `CREATE TEMP TABLE bench_results ON COMMIT PRESERVE ROWS AS
			SELECT k, j, r.results, r.top
			FROM (VALUES (5), (10)) ks (k), generate_series(0, $3::int - 1) j,
			LATERAL (
			    SELECT jsonb_agg(jsonb_build_object(
			               'name', 'src' || lpad((t.i % $2::int)::text, 3, '0') || '__tool_' || t.i,
			               'score', 2.5 - p * 0.2,
			               'lexical_rank', CASE WHEN random() < 0.9 THEN p END,
			               'vector_rank', CASE WHEN random() < 0.85 THEN p END,
			               'bm25', CASE WHEN random() < 0.9 THEN round((random() * 15)::numeric, 3) END,
			               'name_match', false) ORDER BY p) AS results,
			           max(2.5 - p * 0.2) AS top
			    FROM generate_series(1, k + 0 * j) p
			    CROSS JOIN LATERAL (SELECT floor(power(random(), 2.5) * $1::int)::int + 0 * p AS i) t
			) r`

// seedSearches writes $1 searches over the last $2 days, each with a result list of
// bench_results ($4 per k), of sources $3: 65% find_tools, the rest REST, some filtered,
// some finding nothing, over 40 callers; the answer's confidence anywhere in [0, 1), no good
// match below 0.4 (and when nothing was found).
const seedSearches = `INSERT INTO search_log (id, created_at, query, mode, k, filters, profile, format, results, result_count,
			                        top_score, latency_ms, timings, caller, caller_key_id, session_id, endpoint,
			                        confidence, no_good_match, tenant)
			SELECT g.n, g.at, g.query, g.mode, g.k, g.filters, g.profile, g.format,
			       CASE WHEN g.zero THEN '[]' ELSE r.results END, CASE WHEN g.zero THEN 0 ELSE g.k END,
			       CASE WHEN NOT g.zero THEN r.top END,
			       g.lat, jsonb_build_object('embed_ms', 1.0, 'db_ms', g.lat - 1), g.caller, g.key, g.session, g.ep,
			       CASE WHEN g.zero THEN 0 ELSE g.conf END, g.zero OR g.conf < 0.4, g.tenant
			FROM (
			    SELECT b.*,
			           CASE WHEN b.zero THEN 'zzz missing thing ' || (b.qn % 500)
			                ELSE 'find ' || (ARRAY['weather', 'stock price', 'invoice', 'calendar event', 'email', 'github issue',
			                                       'slack message', 'database row', 'file', 'map route'])[1 + b.qn % 10] || ' ' || b.qn
			           END AS query
			    FROM (
			        SELECT a.n, a.at, a.ep, a.conf,
			               CASE WHEN a.ep = 'find_tools' OR a.x < 0.85 THEN 'hybrid' WHEN a.x < 0.95 THEN 'lexical' ELSE 'vector' END AS mode,
			               CASE WHEN a.ep = 'find_tools' THEN 5 ELSE 10 END AS k,
			               CASE WHEN a.ep = 'rest' AND a.y < 0.15
			                        THEN jsonb_build_object('sources', jsonb_build_array('src' || lpad((a.n % $3::int)::text, 3, '0')), 'tags', NULL)
			                    WHEN a.ep = 'rest' AND a.y < 0.20 THEN jsonb_build_object('sources', NULL, 'tags', jsonb_build_array('tag' || (a.n % 7)))
			                    ELSE '{"sources": null, "tags": null}'::jsonb END AS filters,
			               (random() < 0.05 OR (a.ep = 'rest' AND a.y < 0.20 AND random() < 0.3)) AS zero,
			               floor(power(random(), 3) * 30000)::int AS qn,
			               floor(random() * $4::int)::int AS j,
			               CASE WHEN a.at < now() - $2::int * interval '1 day' / 3 THEN 'default' ELSE 'tuned' END AS profile,
			               CASE WHEN a.ep = 'find_tools' THEN 'raw' ELSE 'openai' END AS format,
			               3 + power(random(), 4) * 300 AS lat,
			               'agent-' || (a.n % 40) AS caller, (a.n % 40) + 1 AS key,
			               -- the operator's, two named tenants' and keys' own, and one search in
			               -- seven logged before the log named its tenant
			               CASE WHEN a.n % 7 <> 0 THEN (ARRAY['', 'acme', 'globex', 'key:' || ((a.n % 40) + 1)])[1 + (a.n % 40) % 4] END AS tenant,
			               CASE WHEN a.ep = 'find_tools' THEN 'session-' || (a.n / 8) END AS session
			        FROM (
			            SELECT n, now() - random() * $2::int * interval '1 day' AS at,
			                   CASE WHEN random() < 0.65 THEN 'find_tools' ELSE 'rest' END AS ep, random() AS x, random() AS y,
			                   random() AS conf
			            FROM generate_series(1, $1::int) n
			        ) a
			    ) b
			) g
			JOIN bench_results r ON r.k = g.k AND r.j = g.j`

// seedLabels labels about 11% of the searches that found something, as a call (find_tools)
// or feedback (REST) would: the first result 60% of the time, within a minute.
const seedLabels = `INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms,
			                           tool_source, success, created_at)
			SELECT l.id, l.created_at, l.results -> (x.rank - 1) ->> 'name',
			       CASE WHEN l.endpoint = 'find_tools' THEN 'call' ELSE 'feedback' END,
			       x.rank, x.delay, split_part(l.results -> (x.rank - 1) ->> 'name', '__', 1), random() < 0.9,
			       l.created_at + x.delay * interval '1 ms'
			FROM search_log l
			CROSS JOIN LATERAL (
			    SELECT CASE WHEN random() < 0.6 THEN 1 ELSE 1 + floor(random() * l.result_count)::int END AS rank,
			           floor(random() * 60000)::bigint + 0 * l.id AS delay
			) x
			WHERE l.result_count > 0 AND random() < 0.11`

// Partitions makes the monthly partitions of search_log the last days days fall in (the
// maintenance job makes only the current month's and the next ones).
func Partitions(ctx context.Context, pool *pgxpool.Pool, days int) error {
	// Raw SQL: the partitions' bounds in the server's time zone, as
	// toolgate_ensure_search_log_partitions computes them.
	rows, err := pool.Query(ctx, `SELECT 'search_log_' || to_char(m, 'YYYYMM'), m::date::text, (m + interval '1 month')::date::text
		FROM generate_series(date_trunc('month', now() - $1::int * interval '1 day'), date_trunc('month', now()) + interval '2 months',
		                     interval '1 month') m
		WHERE to_regclass('search_log_' || to_char(m, 'YYYYMM')) IS NULL`, days)
	if err != nil {
		return err
	}
	type part struct{ name, from, to string }
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (part, error) {
		var p part
		err := r.Scan(&p.name, &p.from, &p.to)
		return p, err
	})
	if err != nil {
		return err
	}
	for _, p := range parts {
		// Raw DDL: a partition's name and bounds cannot be bind parameters; all three are
		// the database's own output above.
		if _, err := pool.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s PARTITION OF search_log FOR VALUES FROM ('%s') TO ('%s')`,
			pgx.Identifier{p.name}.Sanitize(), p.from, p.to)); err != nil {
			return err
		}
	}
	return nil
}
