-- Per-minute request counts of OAuth subjects (TOOLGATE_OAUTH_RATE_PER_MIN), as api_key_rate
-- counts keys': fixed one-minute windows shared by every API instance, UNLOGGED (a crash
-- loses at most the current window), old windows deleted by the api_key_rate_cleanup job.
-- The subject is the caller's name, 'oauth:<issuer>#<subject>' (auth.OAuthName).
CREATE UNLOGGED TABLE oauth_subject_rate (
    subject      text        NOT NULL,
    window_start timestamptz NOT NULL,
    hits         integer     NOT NULL,
    PRIMARY KEY (subject, window_start)
);
