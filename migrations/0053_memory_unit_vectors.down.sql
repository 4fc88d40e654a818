-- The stored embeddings stay unit vectors: the cosine the memory branch then computes
-- reads them as before.
DROP TRIGGER tool_memories_unit ON tool_memories;
DROP FUNCTION toolgate_unit_memory();
