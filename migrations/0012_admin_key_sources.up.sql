-- An admin key may do everything, minting new keys included, so a list of sources cannot
-- limit it (issue 16): the combination is refused. Keys created with both before this check
-- keep their source limit and lose admin: they become search keys of those sources, the
-- only thing such a key could do without being able to reach past its sources.
UPDATE api_keys SET scope = 'search' WHERE scope = 'admin' AND sources IS NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_admin_every_source CHECK (scope <> 'admin' OR sources IS NULL);
