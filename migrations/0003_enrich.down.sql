DELETE FROM weight_profiles WHERE name IN ('var-1', 'var-2', 'default', 'concat', 'mean');
