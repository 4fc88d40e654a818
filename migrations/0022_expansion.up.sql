-- The heuristic enricher's knowledge expansion (internal/enrich, StepExpansion) is a fourth
-- enrichment step: related words of a tool's key terms from the built-in lexicon.
ALTER TABLE tool_enrichments DROP CONSTRAINT tool_enrichments_step_check;
ALTER TABLE tool_enrichments ADD CONSTRAINT tool_enrichments_step_check
    CHECK (step IN ('profile', 'questions', 'topics', 'expansion'));
