-- Tuning TDWA weights from labels (issue 18, docs/profiles.md#tuning-weights-from-labels).
--
-- One row per `toolgate profiles tune` / POST /admin/profiles/tune: what was asked
-- (options), how far the profile_tune job has come (state, phase, done/total), and what it
-- found (result: the weights, the label counts, the metrics of the baseline and the tuned
-- weights on the training and held-out labels, the held-out gain with its confidence
-- interval). A tune that succeeds creates the inactive profile `profile` and starts its
-- re-weight in the same transaction that marks the tune succeeded.
CREATE TABLE profile_tunes (
    id          bigserial PRIMARY KEY,
    -- the profile to create (it must not exist when the tune finishes)
    profile     text NOT NULL CHECK (profile ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    -- the profile the tuned weights are compared with
    baseline    text NOT NULL,
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
    -- running: 'labels', 'embed', 'scan', 'search', 'evaluate'
    phase       text,
    done        integer NOT NULL DEFAULT 0,
    total       integer NOT NULL DEFAULT 0,
    options     jsonb NOT NULL DEFAULT '{}',
    result      jsonb,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

-- The tune that made a profile, so the profile shows its evidence.
ALTER TABLE weight_profiles ADD COLUMN tune_id bigint REFERENCES profile_tunes (id) ON DELETE SET NULL;
