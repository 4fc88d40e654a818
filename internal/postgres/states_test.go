package postgres_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// stateColumns are the columns whose values are typed constants in internal/db/states.go
// (sqlc.yaml gives these columns those types), with the Go type of each.
var stateColumns = []struct{ table, column, goType string }{
	{"vector_sets", "state", "VectorSetState"},
	{"tools", "review_state", "ReviewState"},
	{"tool_revisions", "status", "RevisionStatus"},
	{"sync_runs", "state", "SyncRunState"},
	{"sources", "kind", "SourceKind"},
	{"search_labels", "label_source", "LabelSource"},
	{"profile_tunes", "state", "TuneState"},
	{"profile_experiments", "unit", "ExperimentUnit"},
	{"search_log", "arm", "ExperimentArm"},
}

// TestStateConstantsMatchChecks: the typed constants of each state column are exactly the
// values its CHECK constraint allows, so Go and SQL agree on the states (a value added on
// one side only fails here).
func TestStateConstantsMatchChecks(t *testing.T) {
	t.Parallel()
	consts := stateConstants(t, "../db/states.go")
	pool := pgtest.NewPool(t)
	literal := regexp.MustCompile(`'([^']*)'::text`)
	for _, c := range stateColumns {
		t.Run(c.table+"."+c.column, func(t *testing.T) {
			var def string
			err := pool.QueryRow(context.Background(), `
				SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k
				JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
				WHERE k.contype = 'c' AND k.conrelid = $1::regclass AND a.attname = $2`, c.table, c.column).Scan(&def)
			if err != nil {
				t.Fatalf("CHECK constraint of %s.%s: %v", c.table, c.column, err)
			}
			var allowed []string
			for _, m := range literal.FindAllStringSubmatch(def, -1) {
				allowed = append(allowed, m[1])
			}
			slices.Sort(allowed)
			got := consts[c.goType]
			slices.Sort(got)
			if len(got) == 0 || !slices.Equal(got, allowed) {
				t.Errorf("db.%s constants %v, CHECK allows %v (%s)", c.goType, got, allowed, def)
			}
		})
	}
}

// stateConstants reads the typed string constants of a Go file, by type name.
func stateConstants(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			typ, ok := v.Type.(*ast.Ident)
			if !ok {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[typ.Name] = append(out[typ.Name], s)
				}
			}
		}
	}
	return out
}
