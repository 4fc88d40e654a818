-- A tool's meaning no longer holds the senses of the words its text uses as names
-- (internal/meaning.Names: "Frost" of Cullen/Frost Bankers, the server of a namespace).
-- Every tool is indexed again, which writes its meaning anew.
INSERT INTO search_queue (tool_id) SELECT id FROM tools ORDER BY id;
