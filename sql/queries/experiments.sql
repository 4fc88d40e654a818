-- A/B experiments between weight profiles (migration 0016, docs/experiments.md).

-- name: LockProfileForExperiment :one
-- A profile an experiment is about to name, FOR KEY SHARE: it cannot be deleted (or
-- activated away by a concurrent delete) until the experiment is written.
SELECT id, name, is_active FROM weight_profiles WHERE name = $1 FOR KEY SHARE;

-- name: LockActiveProfile :one
SELECT id, name, is_active FROM weight_profiles WHERE is_active FOR KEY SHARE;

-- name: RunningExperiment :one
SELECT * FROM profile_experiments WHERE stopped_at IS NULL;

-- name: CreateExperiment :one
-- A unique violation of profile_experiments_one_running means another experiment runs; of
-- the name, that the name is taken.
INSERT INTO profile_experiments (name, control_profile_id, candidate_profile_id, control_profile,
                                 candidate_profile, share, unit)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: ListExperiments :many
-- Every experiment, the running one first, then the most recent.
SELECT * FROM profile_experiments ORDER BY stopped_at DESC NULLS FIRST, id DESC;

-- name: GetExperiment :one
SELECT * FROM profile_experiments WHERE name = $1;

-- name: StopExperiment :one
-- Stops the experiment if it runs; returns it either way (stopped_at shows which).
UPDATE profile_experiments SET stopped_at = coalesce(stopped_at, now())
WHERE name = $1
RETURNING *;

-- name: ProfileRunningExperiment :one
-- The running experiment that names the profile, if any (profiles.Delete refuses then).
SELECT name FROM profile_experiments
WHERE stopped_at IS NULL AND $1::bigint IN (control_profile_id, candidate_profile_id);

-- name: SetExperimentMaxPerKey :exec
-- The per-key cap of the report's views for the rest of the transaction
-- (toolgate_experiment_max_per_key).
SELECT set_config('toolgate.experiment_max_per_key', sqlc.arg(max_per_key)::int::text, true);

-- name: ExperimentArms :many
-- The experiment's arms, control first (view profile_experiment_arms): each search key
-- counted for at most the cap's searches per arm, the standard errors clustered by search
-- key or, for trusted searches, by unit. The metrics are NULL for an arm without searches,
-- the standard errors and intervals below two clusters. (The join from profile_experiments
-- tells sqlc that they may be NULL.)
SELECT a.arm, a.profile, a.units, a.keys, a.clusters, a.searches, a.counted, a.labelled,
       a.top_unit, a.top_unit_searches, a.top_key_id, a.top_key, a.top_key_searches,
       a.label_rate, a.label_rate_se, a.label_rate_lo, a.label_rate_hi,
       a.mrr_all, a.mrr_all_se, a.mrr_all_lo, a.mrr_all_hi,
       a.mrr_labelled, a.mrr_labelled_se, a.mrr_labelled_lo, a.mrr_labelled_hi,
       a.mean_rank, a.mean_rank_se, a.mean_rank_lo, a.mean_rank_hi
FROM profile_experiments e
LEFT JOIN profile_experiment_arms a ON a.experiment_id = e.id
WHERE e.id = $1
ORDER BY a.arm = 'candidate', a.arm;

-- name: ExperimentComparison :one
-- Candidate − control of each metric with its standard error and 95% interval (view
-- profile_experiment_comparison).
SELECT c.label_rate_diff, c.label_rate_diff_se, c.label_rate_diff_lo, c.label_rate_diff_hi,
       c.mrr_all_diff, c.mrr_all_diff_se, c.mrr_all_diff_lo, c.mrr_all_diff_hi,
       c.mrr_labelled_diff, c.mrr_labelled_diff_se, c.mrr_labelled_diff_lo, c.mrr_labelled_diff_hi,
       c.mean_rank_diff, c.mean_rank_diff_se, c.mean_rank_diff_lo, c.mean_rank_diff_hi
FROM profile_experiments e
LEFT JOIN profile_experiment_comparison c ON c.experiment_id = e.id
WHERE e.id = $1;
