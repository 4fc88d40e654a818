-- A/B experiments between weight profiles (docs/experiments.md): the arm's bucket of a unit
-- and the views comparing the arms.
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- Migration 0016 made the tables, the columns of search_log and the first copy of these
-- objects; this file is their live definition. CREATE OR REPLACE VIEW keeps a view's columns:
-- a new column goes last, and removing or retyping one needs a DROP VIEW here first.

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

-- Per experiment and arm, over the searches logged in that arm: units (distinct sessions or
-- keys), searches, labelled searches (at least one label of any source), and three metrics
-- with their standard error and a 95% confidence interval (normal approximation: m ± 1.96·se):
--   label_rate  the mean over searches of 1 when labelled, else 0
--   mrr         the mean over searches of 1/rank of the search's best-ranked label, 0 when
--               unlabelled
--   mean_rank   the mean over labelled searches of the best-ranked label's rank (lower is
--               better)
-- The searches are assigned to arms by unit, and the searches of one unit are alike (same
-- agent, same task), so they are not independent observations: the standard errors are
-- cluster-robust, by unit (the ratio estimator's linearization, CR1). For a metric y, a
-- unit u with n_u searches (for mean_rank: labelled searches) and total Y_u = Σ y over them,
-- the arm's estimate is m = Σ_u Y_u / Σ_u n_u and
--   se = sqrt( k/(k−1) · Σ_u (Y_u − m·n_u)² ) / Σ_u n_u
-- with k the number of units with n_u > 0; NULL when k < 2. When every unit makes one
-- search this is the sample standard deviation / √n. With few units (under ~30 per arm) the
-- intervals are approximate, and rather too narrow: the se is then biased low and the normal
-- quantile is too small.
-- Both arms have a row from the start (0 searches, NULL metrics).
CREATE OR REPLACE VIEW profile_experiment_arms AS
WITH per_search AS (
    -- each search of the experiment with its unit (as the Search statement's exp CTE
    -- computes it) and the rank of its best-ranked label (NULL: unlabelled)
    SELECT l.experiment_id, l.arm,
           CASE WHEN e.unit = 'session' AND l.session_id IS NOT NULL THEN 'session:' || l.session_id
                ELSE coalesce('key:' || l.caller_key_id, 'caller:' || coalesce(l.caller, '')) END AS unit,
           (SELECT min(x.rank) FROM search_labels x
            WHERE x.search_id = l.id AND x.search_created_at = l.created_at) AS best_rank
    FROM search_log l
    JOIN profile_experiments e ON e.id = l.experiment_id
    WHERE l.experiment_id IS NOT NULL
), per_unit AS (
    -- each unit of an arm: its searches n, labelled searches nl, and its totals of the three
    -- metrics' values (labelled: 1 or 0; rr: 1/best rank or 0; best rank, labelled only)
    SELECT p.experiment_id, p.arm, p.unit,
           count(*) AS n,
           count(p.best_rank) AS nl,
           sum(CASE WHEN p.best_rank IS NULL THEN 0 ELSE 1 END)::double precision AS labelled_sum,
           sum(coalesce(1.0::double precision / p.best_rank, 0)) AS rr_sum,
           coalesce(sum(p.best_rank::double precision), 0) AS rank_sum
    FROM per_search p
    GROUP BY p.experiment_id, p.arm, p.unit
), per_unit_means AS (
    -- with the arm's estimates m (a ratio of totals), which the residuals need
    SELECT u.*,
           sum(u.labelled_sum) OVER w / sum(u.n::double precision) OVER w AS label_rate,
           sum(u.rr_sum) OVER w / sum(u.n::double precision) OVER w AS mrr,
           sum(u.rank_sum) OVER w / nullif(sum(u.nl::double precision) OVER w, 0) AS mean_rank
    FROM per_unit u
    WINDOW w AS (PARTITION BY u.experiment_id, u.arm)
), stats AS (
    SELECT e.id AS experiment_id, e.name AS experiment, a.arm,
           CASE a.arm WHEN 'candidate' THEN e.candidate_profile ELSE e.control_profile END AS profile,
           count(u.unit) AS units,
           coalesce(sum(u.n), 0)::bigint AS searches,
           coalesce(sum(u.nl), 0)::bigint AS labelled,
           -- k is units for label_rate and mrr; for mean_rank, the units with a labelled search
           count(u.unit) FILTER (WHERE u.nl > 0) AS rank_units,
           min(u.label_rate) AS label_rate, min(u.mrr) AS mrr, min(u.mean_rank) AS mean_rank,
           -- Σ_u (Y_u − m·n_u)²
           sum((u.labelled_sum - u.label_rate * u.n) ^ 2) AS label_rate_ss,
           sum((u.rr_sum - u.mrr * u.n) ^ 2) AS mrr_ss,
           sum((u.rank_sum - u.mean_rank * u.nl) ^ 2) FILTER (WHERE u.nl > 0) AS mean_rank_ss
    FROM profile_experiments e
    CROSS JOIN (SELECT 'control'::text AS arm UNION ALL SELECT 'candidate') a
    LEFT JOIN per_unit_means u ON u.experiment_id = e.id AND u.arm = a.arm
    GROUP BY e.id, e.name, a.arm, e.candidate_profile, e.control_profile
), se AS (
    SELECT st.*,
           CASE WHEN st.units >= 2
                THEN sqrt(st.units::double precision / (st.units - 1) * st.label_rate_ss) / st.searches END AS label_rate_se,
           CASE WHEN st.units >= 2
                THEN sqrt(st.units::double precision / (st.units - 1) * st.mrr_ss) / st.searches END AS mrr_se,
           CASE WHEN st.rank_units >= 2
                THEN sqrt(st.rank_units::double precision / (st.rank_units - 1) * st.mean_rank_ss) / st.labelled END AS mean_rank_se
    FROM stats st
)
SELECT experiment_id, experiment, arm, profile::text AS profile, units, searches, labelled,
       label_rate::double precision AS label_rate, label_rate_se::double precision AS label_rate_se,
       (label_rate - 1.96 * label_rate_se)::double precision AS label_rate_lo,
       (label_rate + 1.96 * label_rate_se)::double precision AS label_rate_hi,
       mrr::double precision AS mrr, mrr_se::double precision AS mrr_se,
       (mrr - 1.96 * mrr_se)::double precision AS mrr_lo, (mrr + 1.96 * mrr_se)::double precision AS mrr_hi,
       mean_rank::double precision AS mean_rank, mean_rank_se::double precision AS mean_rank_se,
       (mean_rank - 1.96 * mean_rank_se)::double precision AS mean_rank_lo,
       (mean_rank + 1.96 * mean_rank_se)::double precision AS mean_rank_hi
FROM se;

-- Per experiment, candidate − control of each metric, with the standard error of the
-- difference sqrt(se_candidate² + se_control²) (the arms are independent: their units are
-- disjoint; each se is clustered by unit, above) and its 95% confidence interval. An
-- interval that excludes 0 is a difference at the 5% level; for mean_rank a negative
-- difference favours the candidate.
CREATE OR REPLACE VIEW profile_experiment_comparison AS
SELECT c.experiment_id, c.experiment, k.profile AS control, c.profile AS candidate,
       k.searches AS control_searches, c.searches AS candidate_searches,
       d.label_rate_diff::double precision AS label_rate_diff, d.label_rate_diff_se::double precision AS label_rate_diff_se,
       (d.label_rate_diff - 1.96 * d.label_rate_diff_se)::double precision AS label_rate_diff_lo,
       (d.label_rate_diff + 1.96 * d.label_rate_diff_se)::double precision AS label_rate_diff_hi,
       d.mrr_diff::double precision AS mrr_diff, d.mrr_diff_se::double precision AS mrr_diff_se,
       (d.mrr_diff - 1.96 * d.mrr_diff_se)::double precision AS mrr_diff_lo,
       (d.mrr_diff + 1.96 * d.mrr_diff_se)::double precision AS mrr_diff_hi,
       d.mean_rank_diff::double precision AS mean_rank_diff, d.mean_rank_diff_se::double precision AS mean_rank_diff_se,
       (d.mean_rank_diff - 1.96 * d.mean_rank_diff_se)::double precision AS mean_rank_diff_lo,
       (d.mean_rank_diff + 1.96 * d.mean_rank_diff_se)::double precision AS mean_rank_diff_hi
FROM profile_experiment_arms c
JOIN profile_experiment_arms k ON k.experiment_id = c.experiment_id AND k.arm = 'control'
CROSS JOIN LATERAL (
    SELECT c.label_rate - k.label_rate AS label_rate_diff,
           sqrt(c.label_rate_se ^ 2 + k.label_rate_se ^ 2) AS label_rate_diff_se,
           c.mrr - k.mrr AS mrr_diff,
           sqrt(c.mrr_se ^ 2 + k.mrr_se ^ 2) AS mrr_diff_se,
           c.mean_rank - k.mean_rank AS mean_rank_diff,
           sqrt(c.mean_rank_se ^ 2 + k.mean_rank_se ^ 2) AS mean_rank_diff_se
) d
WHERE c.arm = 'candidate';
