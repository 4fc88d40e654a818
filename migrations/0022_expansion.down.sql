DELETE FROM tool_enrichments WHERE step = 'expansion';
ALTER TABLE tool_enrichments DROP CONSTRAINT tool_enrichments_step_check;
ALTER TABLE tool_enrichments ADD CONSTRAINT tool_enrichments_step_check
    CHECK (step IN ('profile', 'questions', 'topics'));
