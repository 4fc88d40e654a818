-- Nothing to undo: the tools queued by the up migration are indexed with the meanings of
-- whichever toolgate then runs the indexer.
SELECT 1;
