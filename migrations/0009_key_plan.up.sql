-- The query plan a key's searches get when a request does not ask for one (issue 9: the
-- planner is enabled per request or per key). NULL: no plan.
ALTER TABLE api_keys ADD COLUMN plan text CHECK (plan IN ('none', 'rewrite', 'decompose', 'full'));
