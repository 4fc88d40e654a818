package postgres

// Advisory lock keys: every advisory lock toolgate takes, in one list. SQL that takes one
// names its key in a comment that points here; locks_test.go fails on a key taken anywhere
// in Go or SQL that is not listed here.
const (
	// LockSource (two-key form: LockSource, source id) serializes the writers of one
	// source's catalog (catalog.Apply; sql/queries/catalog.sql LockSource).
	LockSource = 74200
	// LockTestTemplate serializes the building of the test template database across test
	// processes (internal/pgtest).
	LockTestTemplate = 74201
	// LockEmbeddingSpace serializes changes of the embedding space (internal/embed).
	LockEmbeddingSpace = 74203
	// LockLexicalIndexer is the lexical index's single writer (sql/functions/lexical.sql,
	// internal/lexical): held by the indexer's transaction only, never by a transaction
	// that writes tools, components or vectors.
	LockLexicalIndexer = 7250011
	// LockApplyFunctions serializes applying sql/functions after the migrations.
	LockApplyFunctions = 7250012
)

// RetiredLocks are keys that only old migrations or old releases take: no current code
// does, and no new lock may reuse them.
var RetiredLocks = map[int64]string{
	7250004: "the lexical index v1's refresh (migration 0004; its down migration 0011 restores it)",
	7250013: "the lexical impacts' recompute, session-level (now the lease search_reimpact_lease, migration 0027)",
}

// The lock order of everything that writes the catalog (docs/architecture.md#lock-order).
// A transaction takes the locks it needs in this order and never goes back to an earlier
// one; that is what rules out deadlocks between writers:
//
//  1. LockSource of the one source it writes (catalog.Apply: PUT, import, sync);
//  2. tools rows, by id: catalog.Apply's inserts, updates and deletes, an enrichment's
//     LockToolHash (FOR NO KEY UPDATE, so the foreign-key checks of tool_vectors inserts,
//     which take FOR KEY SHARE, never wait for it);
//  3. tool_enrichments and tool_components rows of those tools;
//  4. vector_sets rows FOR KEY SHARE (ListWritableVectorSets), then tool_vectors rows — all
//     written by internal/vectors, inside the caller's transaction;
//  5. search_queue inserts (append-only: no unique key, they wait for nobody).
//
// The lexical indexer takes LockLexicalIndexer and then writes only the index tables, which
// no other transaction writes; it reads tools and components without locking them. A
// re-weight writes only its building set's partition and its vector_sets row.
