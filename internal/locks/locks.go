// Package locks holds every advisory lock key toolgate takes, in one list, and the lock
// order of the writers of the catalog. It imports nothing of the project, so any package
// (internal/embed, internal/postgres, internal/pgtest) can name a key without depending on
// another's code. SQL that takes a key names it in a comment that points here;
// locks_test.go fails on a key taken anywhere in Go or SQL that is not listed here.
package locks

const (
	// Source (two-key form: Source, source id) serializes the writers of one source's
	// catalog (catalog.Apply; sql/queries/catalog.sql LockSource).
	Source = 74200
	// TestTemplate serializes the building of the test template database across test
	// processes (internal/pgtest).
	TestTemplate = 74201
	// EmbeddingSpace serializes changes of the embedding space (internal/embed).
	EmbeddingSpace = 74203
	// MemoryTool (two-key form: MemoryTool, tool id modulo 2³¹−1) serializes the writers of
	// one tool's memories (internal/memory, Refresh; sql/queries/memory.sql
	// LockToolMemories): two sweeps at once write each tool's difference once.
	MemoryTool = 74204
	// LexicalIndexer is the lexical index's single writer (sql/functions/lexical.sql,
	// internal/lexical): held by the indexer's transaction only, never by a transaction
	// that writes tools, components or vectors.
	LexicalIndexer = 7250011
	// ApplyFunctions serializes applying sql/functions after the migrations
	// (internal/postgres).
	ApplyFunctions = 7250012
)

// Retired are keys that only old migrations or old releases take: no current code does,
// and no new lock may reuse them.
var Retired = map[int64]string{
	7250004: "the lexical index v1's refresh (migration 0004; its down migration 0011 restores it)",
	7250013: "the lexical impacts' recompute, session-level (now the lease search_reimpact_lease, migration 0027)",
}

// The lock order of everything that writes the catalog (docs/architecture.md#lock-order).
// A transaction takes the locks it needs in this order and never goes back to an earlier
// one; that is what rules out deadlocks between writers:
//
//  1. Source of the one source it writes (catalog.Apply: PUT, import, sync);
//  2. tools rows, by id: catalog.Apply's inserts, updates and deletes, an enrichment's
//     LockToolHash (FOR NO KEY UPDATE, so the foreign-key checks of tool_vectors inserts,
//     which take FOR KEY SHARE, never wait for it);
//  3. tool_enrichments and tool_components rows of those tools;
//  4. vector_sets rows FOR KEY SHARE (ListWritableVectorSets), then tool_vectors rows — all
//     written by internal/vectors, inside the caller's transaction;
//  5. search_queue inserts (append-only: no unique key, they wait for nobody).
//
// The lexical indexer takes LexicalIndexer and then writes only the index tables, which
// no other transaction writes; it reads tools and components without locking them. A
// re-weight writes only its building set's partition and its vector_sets row. The memory
// sweep writes one tool's memories under MemoryTool of that tool (their foreign-key checks
// take the tool's row FOR KEY SHARE, which only the tool's deletion waits for, and the
// sweep then waits for nothing of the catalog), and a tenant's lists under its
// tool_memory_tenants row; it writes nothing of the catalog.
