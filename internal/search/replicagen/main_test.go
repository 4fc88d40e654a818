package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent: internal/search/replica_sql.go is what replicagen writes from
// the Search statement sqlc generated; after a change of sql/queries/search.sql,
// `make generate` rewrites both.
func TestGeneratedFileIsCurrent(t *testing.T) {
	src, err := os.ReadFile("../../db/search.sql.go")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatalf("%v: the read-replica rewrite no longer fits the Search statement", err)
	}
	got, err := os.ReadFile("../replica_sql.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/search/replica_sql.go is stale: run make generate")
	}
}

func TestReadOnly(t *testing.T) {
	sql := "WITH a AS (SELECT 1), log AS (\n    INSERT INTO search_log (query, k)\n    SELECT $1, $2\n    RETURNING id\n)\nSELECT log.id FROM log"
	got, err := readOnly(sql)
	if err != nil {
		t.Fatal(err)
	}
	want := "WITH a AS (SELECT 1), log AS (\n    SELECT 0::bigint AS id FROM (SELECT $1, $2\n    ) logged\n)\nSELECT log.id FROM log"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"SELECT 1", sql + "; " + sql} {
		if _, err := readOnly(bad); err == nil || !strings.Contains(err.Error(), "want one") {
			t.Errorf("%q: %v, want an error", bad, err)
		}
	}
}
