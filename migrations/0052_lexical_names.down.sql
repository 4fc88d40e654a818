-- Nothing to undo: the tools queued by the up migration are indexed with whatever
-- toolgate_search_document is then.
SELECT 1;
