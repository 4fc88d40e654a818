-- Fusion weights per weight profile (docs/profiles.md#fusion-weights).
--
-- The weights of the lexical and the vector branch in fusion decide most hybrid rankings, so
-- a profile may carry its own, as a tune that scores the fused ranking learns them. NULL (the
-- default, every existing profile) means the service's settings
-- (TOOLGATE_SEARCH_WEIGHT_LEXICAL / _VECTOR); a profile has both or neither. The search reads
-- them from the profile that serves it: the requested one, the A/B experiment arm's, else
-- the active one.
ALTER TABLE weight_profiles
    ADD COLUMN weight_lexical double precision CHECK (weight_lexical >= 0 AND weight_lexical <= 100),
    ADD COLUMN weight_vector  double precision CHECK (weight_vector >= 0 AND weight_vector <= 100),
    ADD CONSTRAINT weight_profiles_fusion_check CHECK ((weight_lexical IS NULL) = (weight_vector IS NULL));
