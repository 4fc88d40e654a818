-- Built-in TDWA weight profiles (ScaleMCP Equation 1). The weights of var-1 and var-2 are
-- the paper's; `default` also weights the key topics and the Tool-DE profile fields, except
-- example_usage, which Tool-DE found hurts retrieval (seed 004 section 4.1): questions keep
-- the largest share (the paper's strongest single component), name and description come
-- next, and the generated fields get small weights because they restate the description.
INSERT INTO weight_profiles (name, strategy, weights, is_active) VALUES
    ('var-1', 'tdwa', '{"name": 0.2, "description": 0.2, "parameters": 0.2, "question": 0.4}', false),
    ('var-2', 'tdwa', '{"name": 0.2, "description": 0.3, "parameters": 0, "question": 0.5}', false),
    ('default', 'tdwa', '{"name": 0.15, "description": 0.2, "parameters": 0.1, "question": 0.3, "topics": 0.1,
                          "profile_function": 0.05, "profile_tags": 0.05, "profile_when_to_use": 0.03,
                          "profile_limitation": 0.02, "profile_example_usage": 0}', true),
    ('concat', 'concat', '{}', false),
    ('mean', 'mean', '{}', false)
ON CONFLICT (name) DO NOTHING;
