-- The memories' embeddings are stored as unit vectors, so that the memory branch's exact
-- scan ranks a tenant's memories by inner product (one multiply-add per dimension), where
-- the cosine also sums both norms (sql/queries/search.sql, CTE mem). For unit vectors the
-- two give the same distance, and the HNSW index (cosine) the same order. The trigger
-- holds every writer to it; the UPDATE brings the stored rows to unit length through it.
CREATE FUNCTION toolgate_unit_memory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.embedding IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.embedding IS DISTINCT FROM OLD.embedding) THEN
        NEW.embedding := l2_normalize(NEW.embedding);
    END IF;
    RETURN NEW;
END $$;

-- on every update, not UPDATE OF embedding: a trigger naming the column would forbid
-- toolgate_retype_memories's change of its type
CREATE TRIGGER tool_memories_unit BEFORE INSERT OR UPDATE ON tool_memories
    FOR EACH ROW EXECUTE FUNCTION toolgate_unit_memory();

UPDATE tool_memories SET embedding = l2_normalize(embedding) WHERE embedding IS NOT NULL;
