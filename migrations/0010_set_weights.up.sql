-- A vector set is built with one profile's weights; it keeps them, so that tools enriched
-- later are combined into it with the same weights, whatever PUT /admin/profiles changed
-- since (the new weights take effect with the next re-weight, which builds a new set).
-- Existing sets take their profile's current weights, the best record there is.
ALTER TABLE vector_sets ADD COLUMN strategy text, ADD COLUMN weights jsonb;
UPDATE vector_sets vs SET strategy = p.strategy, weights = p.weights
FROM weight_profiles p WHERE p.id = vs.profile_id;
ALTER TABLE vector_sets ALTER COLUMN strategy SET NOT NULL, ALTER COLUMN weights SET NOT NULL;
