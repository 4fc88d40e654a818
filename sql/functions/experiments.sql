-- A/B experiments between weight profiles (docs/experiments.md): the arm's bucket of a unit
-- and the views comparing the arms.
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Migration 0016 made the tables, the columns of search_log and the first copy of these
-- objects; this file is their live definition. The report's functions and views are dropped
-- and made again each time (nothing else depends on them), so their columns may change; the
-- unit and bucket functions, which the Search statement calls, are only ever replaced.

-- The arm's bucket of a unit: the first 52 bits of SHA-256(experiment || ':' || unit) as a
-- number in [0, 1), exact in double precision. A unit whose bucket is below the experiment's
-- share is in the candidate arm. Mirrored by experiments.Bucket in Go (a test checks that
-- they agree), so that an operator can tell a session's arm in advance. Never change it: a
-- running experiment would reshuffle its units.
CREATE OR REPLACE FUNCTION toolgate_ab_bucket(experiment bigint, unit text) RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ('x' || left(encode(sha256(convert_to(experiment::text || ':' || unit, 'UTF8')), 'hex'), 13))::bit(52)::bigint
           / 4503599627370496::double precision
$$;

-- The unit value of a search, which toolgate_ab_bucket hashes: the caller, 'key:' || the API
-- key's id, or without a key 'caller:' || the caller's name; and, when the experiment's unit
-- is 'session' and the search has a session, '/session:' || the session id after it. A
-- session is thus always some caller's: the session_id a REST client chooses names a unit of
-- its own key only. Mirrored by experiments.UnitValue in Go (a test checks that they agree);
-- the Search statement (sql/queries/search.sql, CTE exp) and the report call it.
CREATE OR REPLACE FUNCTION toolgate_ab_unit(unit text, session_id text, caller_key_id bigint, caller text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce('key:' || caller_key_id, 'caller:' || coalesce(caller, ''))
           || CASE WHEN unit = 'session' AND session_id IS NOT NULL THEN '/session:' || session_id ELSE '' END
$$;

DROP VIEW IF EXISTS profile_experiment_comparison;
DROP VIEW IF EXISTS profile_experiment_arms;
DROP FUNCTION IF EXISTS toolgate_experiment_comparison(bigint, integer);
DROP FUNCTION IF EXISTS toolgate_experiment_arms(bigint, integer);
DROP FUNCTION IF EXISTS toolgate_experiment_clusters(bigint, integer);
DROP FUNCTION IF EXISTS toolgate_experiment_units(bigint, integer);

-- Per arm and unit of an experiment, the unit's searches, after the per-key cap: a search key
-- (an API key of scope search) counts at most max_per_key searches per arm, its most recent,
-- so that one tenant's volume cannot outweigh the others, and so does an OAuth subject
-- (toolgate_token_search: the log keeps no token's scope, so an admin token's subject is
-- capped too); searches without a credential (open mode, the operator's) and of an admin key
-- are not capped (capped = false). Columns: the unit's API key (NULL: none), its principal
-- ('key:<id>' or 'caller:<name>', what the cap and the clusters count by), searches
-- (logged), n (counted: after the cap), nl (counted and labelled: at least one label of any
-- source), rr_sum (Σ 1/rank of each labelled search's best-ranked label) and rank_sum (Σ of
-- those ranks). A unit is one caller's (toolgate_ab_unit).
CREATE FUNCTION toolgate_experiment_units(experiment bigint, max_per_key integer)
RETURNS TABLE (arm text, unit text, key_id bigint, principal text, capped boolean, searches bigint, n bigint, nl bigint,
               rr_sum double precision, rank_sum double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH per_search AS (
        SELECT l.arm, l.id, l.created_at, l.caller_key_id,
               coalesce('key:' || l.caller_key_id, 'caller:' || coalesce(l.caller, '')) AS principal,
               toolgate_ab_unit(e.unit, l.session_id, l.caller_key_id, l.caller) AS unit,
               -- a key whose row is gone counts as a search key
               (l.caller_key_id IS NOT NULL AND k.scope IS DISTINCT FROM 'admin') OR toolgate_token_search(l.caller) AS capped,
               (SELECT min(x.rank) FROM search_labels x
                WHERE x.search_id = l.id AND x.search_created_at = l.created_at) AS best_rank
        FROM search_log l
        JOIN profile_experiments e ON e.id = l.experiment_id
        LEFT JOIN api_keys k ON k.id = l.caller_key_id
        WHERE l.experiment_id = experiment AND l.arm IS NOT NULL
    ), counted AS (
        SELECT p.*,
               NOT p.capped OR row_number() OVER (PARTITION BY p.arm, p.principal, p.capped
                                                  ORDER BY p.created_at DESC, p.id DESC) <= max_per_key AS counted
        FROM per_search p
    )
    SELECT c.arm, c.unit, c.caller_key_id, c.principal, c.capped, count(*),
           count(*) FILTER (WHERE c.counted),
           count(c.best_rank) FILTER (WHERE c.counted),
           coalesce(sum(1.0::double precision / c.best_rank) FILTER (WHERE c.counted), 0),
           coalesce(sum(c.best_rank::double precision) FILTER (WHERE c.counted), 0)
    FROM counted c
    GROUP BY c.arm, c.unit, c.caller_key_id, c.principal, c.capped
$$;

-- Per arm and cluster, the counted searches' totals and their residuals from the arm's
-- estimates. A cluster is an independent observation: a capped principal, a search key or an
-- OAuth subject (however many sessions it made: it chooses them, and a REST session_id is
-- the client's choice, so the principal is the observation), else a unit. For a metric with per-search value y and estimate
-- m = Σ_g Y_g / Σ_g n_g, the residual of cluster g is Y_g − m·n_g:
--   label_rate    y = 1 when labelled, else 0, over the counted searches
--   mrr_all       y = 1/rank of the best-ranked label, 0 when unlabelled, over the counted searches
--   mrr_labelled  y = 1/rank of the best-ranked label, over the counted labelled searches
--   mean_rank     y = the best-ranked label's rank, over the counted labelled searches
CREATE FUNCTION toolgate_experiment_clusters(experiment bigint, max_per_key integer)
RETURNS TABLE (arm text, cluster text, n bigint, nl bigint,
               label_rate_res double precision, mrr_all_res double precision,
               mrr_labelled_res double precision, mean_rank_res double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH c AS (
        SELECT u.arm, CASE WHEN u.capped THEN u.principal ELSE u.unit END AS cluster,
               sum(u.n)::bigint AS n, sum(u.nl)::bigint AS nl, sum(u.rr_sum) AS rr_sum, sum(u.rank_sum) AS rank_sum
        FROM toolgate_experiment_units(experiment, max_per_key) u
        GROUP BY 1, 2
    ), m AS (
        SELECT c.*,
               sum(c.nl::double precision) OVER w / nullif(sum(c.n::double precision) OVER w, 0) AS label_rate,
               sum(c.rr_sum) OVER w / nullif(sum(c.n::double precision) OVER w, 0) AS mrr_all,
               sum(c.rr_sum) OVER w / nullif(sum(c.nl::double precision) OVER w, 0) AS mrr_labelled,
               sum(c.rank_sum) OVER w / nullif(sum(c.nl::double precision) OVER w, 0) AS mean_rank
        FROM c
        WINDOW w AS (PARTITION BY c.arm)
    )
    SELECT m.arm, m.cluster, m.n, m.nl,
           m.nl - m.label_rate * m.n, m.rr_sum - m.mrr_all * m.n,
           CASE WHEN m.nl > 0 THEN m.rr_sum - m.mrr_labelled * m.nl END,
           CASE WHEN m.nl > 0 THEN m.rank_sum - m.mean_rank * m.nl END
    FROM m
$$;

-- Per arm of an experiment (both, searches or not), what the comparison stands on and four
-- metrics with their standard error and 95% interval (normal approximation, m ± 1.96·se):
--   units, keys     distinct units and API keys whose searches the arm served
--   clusters        independent observations (toolgate_experiment_clusters) among the
--                   counted searches; rank_clusters: those with a labelled search
--   searches        logged in the arm; counted: after the per-key cap; labelled: counted
--                   searches with at least one label
--   top_unit, top_unit_searches, top_key_id, top_key, top_key_searches
--                   the unit and the API key with the most searches in the arm (logged,
--                   before the cap; ties: the first by name), to read the arm's shares by
--   the metrics     label_rate, mrr_all, mrr_labelled, mean_rank (toolgate_experiment_clusters)
-- The standard errors are cluster-robust (the ratio estimator's linearization, CR1): with
-- N = Σ_g n_g over the arm's clusters (n_l for the metrics over labelled searches) and k the
-- clusters with n_g > 0,
--   se = sqrt( k/(k−1) · Σ_g (Y_g − m·n_g)² ) / N
-- NULL when k < 2. When every cluster makes one search this is the sample standard deviation
-- / √n. With few clusters (under ~30 per arm) the intervals are approximate, and rather too
-- narrow.
CREATE FUNCTION toolgate_experiment_arms(experiment bigint, max_per_key integer)
RETURNS TABLE (arm text, units bigint, keys bigint, clusters bigint, rank_clusters bigint,
               searches bigint, counted bigint, labelled bigint,
               top_unit text, top_unit_searches bigint, top_key_id bigint, top_key text, top_key_searches bigint,
               label_rate double precision, label_rate_se double precision,
               mrr_all double precision, mrr_all_se double precision,
               mrr_labelled double precision, mrr_labelled_se double precision,
               mean_rank double precision, mean_rank_se double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH u AS (
        SELECT * FROM toolgate_experiment_units(experiment, max_per_key)
    ), c AS (
        SELECT * FROM toolgate_experiment_clusters(experiment, max_per_key)
    ), totals AS (
        SELECT u.arm, count(*) AS units, count(DISTINCT u.key_id) AS keys,
               sum(u.searches)::bigint AS searches, sum(u.n)::bigint AS counted, sum(u.nl)::bigint AS labelled,
               sum(u.rr_sum) AS rr_sum, sum(u.rank_sum) AS rank_sum
        FROM u GROUP BY u.arm
    ), cl AS (
        SELECT c.arm, count(*) FILTER (WHERE c.n > 0) AS clusters, count(*) FILTER (WHERE c.nl > 0) AS rank_clusters,
               sum(c.label_rate_res ^ 2) AS label_rate_ss, sum(c.mrr_all_res ^ 2) AS mrr_all_ss,
               sum(c.mrr_labelled_res ^ 2) AS mrr_labelled_ss, sum(c.mean_rank_res ^ 2) AS mean_rank_ss
        FROM c GROUP BY c.arm
    ), se AS (
        SELECT a.arm, t.units, t.keys, cl.clusters, cl.rank_clusters, t.searches, t.counted, t.labelled,
               t.labelled::double precision / nullif(t.counted, 0) AS label_rate,
               t.rr_sum / nullif(t.counted, 0) AS mrr_all,
               t.rr_sum / nullif(t.labelled, 0) AS mrr_labelled,
               t.rank_sum / nullif(t.labelled, 0) AS mean_rank,
               CASE WHEN cl.clusters >= 2 THEN sqrt(cl.clusters::double precision / (cl.clusters - 1) * cl.label_rate_ss) / t.counted END AS label_rate_se,
               CASE WHEN cl.clusters >= 2 THEN sqrt(cl.clusters::double precision / (cl.clusters - 1) * cl.mrr_all_ss) / t.counted END AS mrr_all_se,
               CASE WHEN cl.rank_clusters >= 2 THEN sqrt(cl.rank_clusters::double precision / (cl.rank_clusters - 1) * cl.mrr_labelled_ss) / t.labelled END AS mrr_labelled_se,
               CASE WHEN cl.rank_clusters >= 2 THEN sqrt(cl.rank_clusters::double precision / (cl.rank_clusters - 1) * cl.mean_rank_ss) / t.labelled END AS mean_rank_se
        FROM (VALUES ('control'), ('candidate')) AS a (arm)
        LEFT JOIN totals t ON t.arm = a.arm
        LEFT JOIN cl ON cl.arm = a.arm
    )
    SELECT se.arm, coalesce(se.units, 0), coalesce(se.keys, 0), coalesce(se.clusters, 0), coalesce(se.rank_clusters, 0),
           coalesce(se.searches, 0), coalesce(se.counted, 0), coalesce(se.labelled, 0),
           tu.unit, tu.searches, tk.key_id, tk.name, tk.searches,
           se.label_rate, se.label_rate_se, se.mrr_all, se.mrr_all_se,
           se.mrr_labelled, se.mrr_labelled_se, se.mean_rank, se.mean_rank_se
    FROM se
    LEFT JOIN LATERAL (
        SELECT u.unit, u.searches FROM u WHERE u.arm = se.arm ORDER BY u.searches DESC, u.unit LIMIT 1
    ) tu ON true
    LEFT JOIN LATERAL (
        SELECT u.key_id, coalesce(k.name, '') AS name, sum(u.searches)::bigint AS searches
        FROM u LEFT JOIN api_keys k ON k.id = u.key_id
        WHERE u.arm = se.arm AND u.key_id IS NOT NULL
        GROUP BY u.key_id, k.name ORDER BY 3 DESC, 2, 1 LIMIT 1
    ) tk ON true
$$;

-- Candidate − control of each metric with its standard error and 95% interval. A cluster in
-- both arms (a search key whose sessions went to both) makes the arms' estimates covary, so
--   se_diff = sqrt( se_c² + se_k² − 2·cov ),
--   cov = sqrt( k_c/(k_c−1) · k_k/(k_k−1) ) · Σ_g r_gc·r_gk / (N_c·N_k)
-- over the clusters g in both arms (r: their residuals, k and N as in the arms); without
-- such a cluster cov is 0 and se_diff = sqrt(se_c² + se_k²). NULL when either arm's se is.
-- An interval that excludes 0 is a difference at the 5% level; for mean_rank a negative
-- difference favours the candidate.
CREATE FUNCTION toolgate_experiment_comparison(experiment bigint, max_per_key integer)
RETURNS TABLE (control_searches bigint, candidate_searches bigint,
               label_rate_diff double precision, label_rate_diff_se double precision,
               mrr_all_diff double precision, mrr_all_diff_se double precision,
               mrr_labelled_diff double precision, mrr_labelled_diff_se double precision,
               mean_rank_diff double precision, mean_rank_diff_se double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH a AS (
        SELECT * FROM toolgate_experiment_arms(experiment, max_per_key)
    ), c AS (
        SELECT * FROM toolgate_experiment_clusters(experiment, max_per_key)
    ), cross_arm AS (
        SELECT sum(x.label_rate_res * y.label_rate_res) AS label_rate,
               sum(x.mrr_all_res * y.mrr_all_res) AS mrr_all,
               sum(x.mrr_labelled_res * y.mrr_labelled_res) AS mrr_labelled,
               sum(x.mean_rank_res * y.mean_rank_res) AS mean_rank
        FROM c x JOIN c y ON y.cluster = x.cluster AND y.arm = 'control'
        WHERE x.arm = 'candidate'
    ), f AS (
        -- the CR1 factors' geometric mean, and N_c·N_k, per metric kind
        SELECT CASE WHEN ca.clusters >= 2 AND ko.clusters >= 2
                    THEN sqrt(ca.clusters::double precision / (ca.clusters - 1) * ko.clusters / (ko.clusters - 1)) END AS f,
               CASE WHEN ca.rank_clusters >= 2 AND ko.rank_clusters >= 2
                    THEN sqrt(ca.rank_clusters::double precision / (ca.rank_clusters - 1) * ko.rank_clusters / (ko.rank_clusters - 1)) END AS fl,
               ca.counted::double precision * ko.counted AS nn, ca.labelled::double precision * ko.labelled AS nnl
        FROM a ca, a ko WHERE ca.arm = 'candidate' AND ko.arm = 'control'
    )
    -- v − least(v, 0): a variance that rounding made a hair negative is 0, a NULL stays NULL
    SELECT ko.searches, ca.searches,
           ca.label_rate - ko.label_rate, sqrt(v.label_rate - least(v.label_rate, 0)),
           ca.mrr_all - ko.mrr_all, sqrt(v.mrr_all - least(v.mrr_all, 0)),
           ca.mrr_labelled - ko.mrr_labelled, sqrt(v.mrr_labelled - least(v.mrr_labelled, 0)),
           ca.mean_rank - ko.mean_rank, sqrt(v.mean_rank - least(v.mean_rank, 0))
    FROM a ca
    JOIN a ko ON ko.arm = 'control'
    CROSS JOIN f
    CROSS JOIN cross_arm x
    CROSS JOIN LATERAL (
        SELECT ca.label_rate_se ^ 2 + ko.label_rate_se ^ 2 - 2 * f.f * coalesce(x.label_rate, 0) / f.nn AS label_rate,
               ca.mrr_all_se ^ 2 + ko.mrr_all_se ^ 2 - 2 * f.f * coalesce(x.mrr_all, 0) / f.nn AS mrr_all,
               ca.mrr_labelled_se ^ 2 + ko.mrr_labelled_se ^ 2 - 2 * f.fl * coalesce(x.mrr_labelled, 0) / f.nnl AS mrr_labelled,
               ca.mean_rank_se ^ 2 + ko.mean_rank_se ^ 2 - 2 * f.fl * coalesce(x.mean_rank, 0) / f.nnl AS mean_rank
    ) v
    WHERE ca.arm = 'candidate'
$$;

-- The per-key cap of the views: the setting toolgate.experiment_max_per_key when set (SET
-- or, in a transaction, SET LOCAL: experiments.Get sets it from its max_per_key), else 200
-- (experiments.DefaultMaxPerKey).
CREATE OR REPLACE FUNCTION toolgate_experiment_max_per_key() RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(nullif(current_setting('toolgate.experiment_max_per_key', true), '')::integer, 200)
$$;

-- The arms of every experiment with their intervals (toolgate_experiment_arms), with the
-- views' per-key cap. (The column list names the function's columns for sqlc, the casts
-- type them.)
CREATE VIEW profile_experiment_arms AS
SELECT e.id AS experiment_id, e.name AS experiment, a.arm::text AS arm,
       (CASE a.arm WHEN 'candidate' THEN e.candidate_profile ELSE e.control_profile END)::text AS profile,
       a.units::bigint AS units, a.keys::bigint AS keys, a.clusters::bigint AS clusters,
       a.rank_clusters::bigint AS rank_clusters, a.searches::bigint AS searches,
       a.counted::bigint AS counted, a.labelled::bigint AS labelled,
       a.top_unit::text AS top_unit, a.top_unit_searches::bigint AS top_unit_searches,
       a.top_key_id::bigint AS top_key_id, a.top_key::text AS top_key, a.top_key_searches::bigint AS top_key_searches,
       a.label_rate::double precision AS label_rate, a.label_rate_se::double precision AS label_rate_se,
       (a.label_rate - 1.96 * a.label_rate_se)::double precision AS label_rate_lo,
       (a.label_rate + 1.96 * a.label_rate_se)::double precision AS label_rate_hi,
       a.mrr_all::double precision AS mrr_all, a.mrr_all_se::double precision AS mrr_all_se,
       (a.mrr_all - 1.96 * a.mrr_all_se)::double precision AS mrr_all_lo,
       (a.mrr_all + 1.96 * a.mrr_all_se)::double precision AS mrr_all_hi,
       a.mrr_labelled::double precision AS mrr_labelled, a.mrr_labelled_se::double precision AS mrr_labelled_se,
       (a.mrr_labelled - 1.96 * a.mrr_labelled_se)::double precision AS mrr_labelled_lo,
       (a.mrr_labelled + 1.96 * a.mrr_labelled_se)::double precision AS mrr_labelled_hi,
       a.mean_rank::double precision AS mean_rank, a.mean_rank_se::double precision AS mean_rank_se,
       (a.mean_rank - 1.96 * a.mean_rank_se)::double precision AS mean_rank_lo,
       (a.mean_rank + 1.96 * a.mean_rank_se)::double precision AS mean_rank_hi
FROM profile_experiments e
CROSS JOIN LATERAL toolgate_experiment_arms(e.id, toolgate_experiment_max_per_key())
    AS a (arm, units, keys, clusters, rank_clusters, searches, counted, labelled,
          top_unit, top_unit_searches, top_key_id, top_key, top_key_searches,
          label_rate, label_rate_se, mrr_all, mrr_all_se, mrr_labelled, mrr_labelled_se, mean_rank, mean_rank_se);

-- Candidate − control of every experiment with the intervals (toolgate_experiment_comparison).
CREATE VIEW profile_experiment_comparison AS
SELECT e.id AS experiment_id, e.name AS experiment, e.control_profile AS control, e.candidate_profile AS candidate,
       d.control_searches::bigint AS control_searches, d.candidate_searches::bigint AS candidate_searches,
       d.label_rate_diff::double precision AS label_rate_diff, d.label_rate_diff_se::double precision AS label_rate_diff_se,
       (d.label_rate_diff - 1.96 * d.label_rate_diff_se)::double precision AS label_rate_diff_lo,
       (d.label_rate_diff + 1.96 * d.label_rate_diff_se)::double precision AS label_rate_diff_hi,
       d.mrr_all_diff::double precision AS mrr_all_diff, d.mrr_all_diff_se::double precision AS mrr_all_diff_se,
       (d.mrr_all_diff - 1.96 * d.mrr_all_diff_se)::double precision AS mrr_all_diff_lo,
       (d.mrr_all_diff + 1.96 * d.mrr_all_diff_se)::double precision AS mrr_all_diff_hi,
       d.mrr_labelled_diff::double precision AS mrr_labelled_diff, d.mrr_labelled_diff_se::double precision AS mrr_labelled_diff_se,
       (d.mrr_labelled_diff - 1.96 * d.mrr_labelled_diff_se)::double precision AS mrr_labelled_diff_lo,
       (d.mrr_labelled_diff + 1.96 * d.mrr_labelled_diff_se)::double precision AS mrr_labelled_diff_hi,
       d.mean_rank_diff::double precision AS mean_rank_diff, d.mean_rank_diff_se::double precision AS mean_rank_diff_se,
       (d.mean_rank_diff - 1.96 * d.mean_rank_diff_se)::double precision AS mean_rank_diff_lo,
       (d.mean_rank_diff + 1.96 * d.mean_rank_diff_se)::double precision AS mean_rank_diff_hi
FROM profile_experiments e
CROSS JOIN LATERAL toolgate_experiment_comparison(e.id, toolgate_experiment_max_per_key())
    AS d (control_searches, candidate_searches, label_rate_diff, label_rate_diff_se, mrr_all_diff, mrr_all_diff_se,
          mrr_labelled_diff, mrr_labelled_diff_se, mean_rank_diff, mean_rank_diff_se);
