package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// A scenario is the history of one tool name in a source: what the source lists in three
// setup syncs (the first without review mode, the other two with it; nil means not listed),
// whether an admin rejects the change held after the second, and what the source lists in
// the sync under test.
type scenario struct {
	name   string
	setup  [3][]catalog.Tool
	reject bool
	final  []catalog.Tool
	// valid: every definition is valid and listed once, so the scenario also fits
	// Apply without opts.Validate (an import, validated beforehand).
	valid bool
}

const (
	schemaA = `{"type":"object","properties":{"q":{"type":"string","description":"query"},"n":{"type":"integer"}},"required":["q"]}`
	// schemaAReordered is schemaA with other key order and whitespace: the same canonical form.
	schemaAReordered = `{"required":["q"], "properties":{"n":{"type":"integer"},"q":{"description":"query","type":"string"}}, "type":"object"}`
	schemaB          = `{"type":"object","properties":{"q":{"type":"string"},"lang":{"type":"string","enum":["en","de"]}}}`
	emptySchema      = `{"type":"object","properties":{}}`
)

// scenarios covers every branch of Apply: unchanged (also after key reordering or
// normalization by Validate), created, updated, deleted, invalid and repeated names, and the
// review-mode states (held, held again, held and rejected, superseded, reverted).
func scenarios(name string) []scenario {
	def := func(suffix, desc, schema string) catalog.Tool {
		return catalog.Tool{Name: name + "_" + suffix, Description: desc, InputSchema: json.RawMessage(schema)}
	}
	full := func(suffix string) catalog.Tool {
		t := def(suffix, "Full definition.", schemaA)
		t.Title = "Full"
		t.OutputSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
		t.Annotations = json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false}`)
		return t
	}
	v1 := func(s string) catalog.Tool { return def(s, "Original "+s+".", schemaA) }
	v2 := func(s string) catalog.Tool { return def(s, "Edited "+s+".", schemaA) }
	v3 := func(s string) catalog.Tool {
		t := def(s, "Original "+s+".", schemaB)
		t.Title, t.Annotations = "Other", json.RawMessage(`{"destructiveHint":true}`)
		return t
	}
	bad := func(s string) catalog.Tool { return def(s, "Broken.", `{"type":"object","properties":{"x":5}}`) }
	list := func(ts ...catalog.Tool) []catalog.Tool { return ts }
	same := func(t catalog.Tool) [3][]catalog.Tool { return [3][]catalog.Tool{list(t), list(t), list(t)} }
	// held: stored as v1, then a change to v2 is held by review mode.
	held := func(s string) [3][]catalog.Tool { return [3][]catalog.Tool{list(v1(s)), list(v2(s)), list(v2(s))} }

	stripped := full("many")
	stripped.Title, stripped.OutputSchema = "Fuller", nil
	stripped.Annotations = json.RawMessage(`{"readOnlyHint":false}`)
	normalized := def("norm", "Normalized.", "")
	normalized.InputSchema = nil // Validate makes it emptySchema: the stored hash again

	return []scenario{
		{name: "unchanged", setup: same(v1("same")), final: list(v1("same")), valid: true},
		{name: "reordered", setup: same(v1("reord")), final: list(def("reord", "Original reord.", schemaAReordered)), valid: true},
		{name: "normalized", setup: same(def("norm", "Normalized.", emptySchema)), final: list(normalized)},
		{name: "created", final: list(v1("new")), valid: true},
		{name: "created full", final: list(full("newfull")), valid: true},
		{name: "updated", setup: same(v1("upd")), final: list(v2("upd")), valid: true},
		{name: "updated many fields", setup: same(full("many")), final: list(stripped), valid: true},
		{name: "deleted", setup: same(v1("del")), final: nil, valid: true},
		{name: "deleted while held", setup: held("delheld"), final: nil, valid: true},
		{name: "invalid new", final: list(bad("badnew"))},
		{name: "invalid edit", setup: same(v1("badedit")), final: list(bad("badedit"))},
		{name: "invalid edit while held", setup: held("badheld"), final: list(bad("badheld"))},
		{name: "repeated new", final: list(v1("dupnew"), v2("dupnew"))},
		{name: "repeated stored", setup: same(v1("dupold")), final: list(v1("dupold"), v2("dupold"))},
		{name: "repeated after invalid", setup: same(v1("dupbad")), final: list(bad("dupbad"), v1("dupbad"))},
		{name: "held listed again", setup: held("heldsame"), final: list(v2("heldsame")), valid: true},
		{name: "held, rejected, listed again", setup: held("rej"), reject: true, final: list(v2("rej")), valid: true},
		{name: "rejected, reverted, listed again", setup: [3][]catalog.Tool{list(v1("rejrev")), list(v2("rejrev")), list(v1("rejrev"))},
			reject: true, final: list(v2("rejrev")), valid: true},
		{name: "held, other change", setup: held("heldother"), final: list(v3("heldother")), valid: true},
		{name: "held, reverted", setup: held("heldrev"), final: list(v1("heldrev")), valid: true},
		{name: "approved, changed", setup: same(v1("chg")), final: list(v3("chg")), valid: true},
	}
}

// sourceState is what a source's catalog looks like inside the transaction of a sync:
// its tools and the revisions of their names, with names stripped of the source, and
// whether each row was written by that transaction.
type sourceState struct {
	Tools     map[string]toolState
	Revisions map[string][]revisionState
}

type toolState struct {
	Title, Description, InputSchema, OutputSchema, Annotations *string
	ContentHash, ReviewState                                   string
	Enabled, CreatedNow, UpdatedNow                            bool
}

type revisionState struct {
	Action                 string
	OldHash, NewHash       *string
	ChangedFields          []string
	Definition             *string
	Status                 string
	CreatedNow, DecidedNow bool
	Decided                bool
}

func readState(t *testing.T, tx pgx.Tx, src db.Source) sourceState {
	t.Helper()
	ctx := context.Background()
	st := sourceState{Tools: map[string]toolState{}, Revisions: map[string][]revisionState{}}
	rows, err := tx.Query(ctx, `
		SELECT original_name, title, description, input_schema::text, output_schema::text, annotations::text,
		       content_hash, review_state, enabled, created_at = now(), updated_at = now()
		FROM tools WHERE source_id = $1`, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, desc string
		var ts toolState
		if err := rows.Scan(&name, &ts.Title, &desc, &ts.InputSchema, &ts.OutputSchema, &ts.Annotations,
			&ts.ContentHash, &ts.ReviewState, &ts.Enabled, &ts.CreatedNow, &ts.UpdatedNow); err != nil {
			t.Fatal(err)
		}
		ts.Description = &desc
		st.Tools[name] = ts
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	rows, err = tx.Query(ctx, `
		SELECT tool_name, action, old_hash, new_hash, changed_fields, definition::text, status,
		       created_at = now(), coalesce(decided_at = now(), false), decided_at IS NOT NULL
		FROM tool_revisions WHERE source_id = $1 ORDER BY id`, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var r revisionState
		if err := rows.Scan(&name, &r.Action, &r.OldHash, &r.NewHash, &r.ChangedFields, &r.Definition, &r.Status,
			&r.CreatedNow, &r.DecidedNow, &r.Decided); err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(name, catalog.Namespaced(src.Name, ""))
		st.Revisions[name] = append(st.Revisions[name], r)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return st
}

// outcome is a sync's Result with the tool ids of Changed replaced by original names.
type outcome struct {
	Created, Updated, Deleted, Unchanged, Pending int
	Changed                                       []string
	Invalid                                       []catalog.InvalidToolError
}

func (o *outcome) add(p outcome) {
	o.Created += p.Created
	o.Updated += p.Updated
	o.Deleted += p.Deleted
	o.Unchanged += p.Unchanged
	o.Pending += p.Pending
	o.Changed = append(o.Changed, p.Changed...)
	o.Invalid = append(o.Invalid, p.Invalid...)
}

// history replays scenarios into the source and returns the result of the final sync and
// the source's state before that sync commits.
func history(t *testing.T, pool *pgxpool.Pool, src db.Source, scs []scenario, final catalog.ApplyOptions) (outcome, sourceState) {
	t.Helper()
	ctx := context.Background()
	apply := func(tx pgx.Tx, pick func(scenario) []catalog.Tool, opts catalog.ApplyOptions) catalog.Result {
		t.Helper()
		var tools []catalog.Tool
		for _, sc := range scs {
			tools = append(tools, pick(sc)...)
		}
		if !opts.Validate {
			for i := range tools {
				if err := tools[i].Validate(); err != nil {
					t.Fatal(err)
				}
			}
		}
		res, err := catalog.Apply(ctx, tx, src, tools, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for phase := range 3 {
		opts := catalog.ApplyOptions{Review: phase > 0, Validate: true}
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			apply(tx, func(sc scenario) []catalog.Tool { return sc.setup[phase] }, opts)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if phase != 1 {
			continue
		}
		// What an admin's reject does (sources.Reject).
		var rejected []string
		for _, sc := range scs {
			if sc.reject {
				rejected = append(rejected, catalog.Namespaced(src.Name, sc.setup[1][0].Name))
			}
		}
		if _, err := pool.Exec(ctx, `UPDATE tool_revisions SET status = 'rejected', decided_at = now()
			WHERE tool_name = ANY($1) AND status = 'pending'`, rejected); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	res := apply(tx, func(sc scenario) []catalog.Tool { return sc.final }, final)
	out := outcome{Created: res.Created, Updated: res.Updated, Deleted: res.Deleted, Unchanged: res.Unchanged,
		Pending: res.Pending, Changed: []string{}, Invalid: []catalog.InvalidToolError{}}
	for _, id := range res.Changed {
		var name string
		if err := tx.QueryRow(ctx, `SELECT original_name FROM tools WHERE id = $1`, id).Scan(&name); err != nil {
			t.Fatalf("changed tool %d: %v", id, err)
		}
		out.Changed = append(out.Changed, name)
	}
	for _, bad := range res.Invalid {
		out.Invalid = append(out.Invalid, *bad)
	}
	return out, readState(t, tx, src)
}

// TestApplyLargeDiffEqualsSmallOnes: one sync of a source holding many tools in every
// situation (scenarios, each repeated) gives exactly the result, tools and revisions that
// syncing each tool alone in its own source gives. The small syncs are covered case by case
// by the tests of jobs and api; this test makes sure that applying a large diff at once
// changes nothing of that. The outcome of one copy of the scenarios is also compared with
// testdata/apply_*.golden.json, written by the tool-at-a-time Apply that came before the
// set-based one (go test -run TestApplyLargeDiffEqualsSmallOnes -update rewrites them).
func TestApplyLargeDiffEqualsSmallOnes(t *testing.T) {
	t.Parallel()
	const copies = 6
	variants := map[string]catalog.ApplyOptions{
		"sync":        {Validate: true},
		"review-sync": {Review: true, Validate: true},
		"import":      {},
	}
	for variant, opts := range variants {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := pgtest.NewPool(t)
			// The lexical index is derived from the tools and has its own tests; its
			// triggers would only make this test slow.
			if _, err := pool.Exec(ctx, `ALTER TABLE tools DISABLE TRIGGER USER`); err != nil {
				t.Fatal(err)
			}
			var all []scenario
			for i := range copies {
				for _, sc := range scenarios(fmt.Sprintf("t%d", i)) {
					if opts.Validate || sc.valid {
						all = append(all, sc)
					}
				}
			}
			q := db.New(pool)
			newSource := func(name string) db.Source {
				src, err := q.CreateSource(ctx, db.CreateSourceParams{Name: name, Kind: "mcp_http", Config: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatal(err)
				}
				return src
			}
			big, bigState := history(t, pool, newSource("big"), all, opts)

			small := outcome{Changed: []string{}, Invalid: []catalog.InvalidToolError{}}
			smallState := sourceState{Tools: map[string]toolState{}, Revisions: map[string][]revisionState{}}
			for i, sc := range all {
				res, st := history(t, pool, newSource(fmt.Sprintf("s%d", i)), []scenario{sc}, opts)
				small.add(res)
				for name, ts := range st.Tools {
					smallState.Tools[name] = ts
				}
				for name, revs := range st.Revisions {
					smallState.Revisions[name] = revs
				}
			}
			slices.Sort(big.Changed)
			slices.Sort(small.Changed)
			if !reflect.DeepEqual(big, small) {
				t.Errorf("result of the large sync:\n%+v\nsum of the small ones:\n%+v", big, small)
			}
			for name, want := range smallState.Tools {
				if got, ok := bigState.Tools[name]; !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("tool %s: large sync stored %+v, small one %+v", name, got, want)
				}
			}
			for name := range bigState.Tools {
				if _, ok := smallState.Tools[name]; !ok {
					t.Errorf("tool %s stored by the large sync only", name)
				}
			}
			if !reflect.DeepEqual(bigState.Revisions, smallState.Revisions) {
				for name, want := range smallState.Revisions {
					if got := bigState.Revisions[name]; !reflect.DeepEqual(got, want) {
						t.Errorf("revisions of %s: large sync %s, small one %s", name, revisionsString(got), revisionsString(want))
					}
				}
				t.Errorf("revisions differ (%d names after the large sync, %d after the small ones)", len(bigState.Revisions), len(smallState.Revisions))
			}
			checkGolden(t, "testdata/apply_"+variant+".golden.json", golden(big, bigState, "t0_"))
			// The scenarios reach every outcome.
			if big.Created == 0 || big.Deleted == 0 || big.Unchanged == 0 || (opts.Review != (big.Pending > 0)) ||
				(opts.Review == (big.Updated > 0)) || (opts.Validate && len(big.Invalid) == 0) {
				t.Errorf("scenarios miss an outcome: %+v", big)
			}
		})
	}
}

// namedQueries counts the statements of internal/db (their SQL starts with sqlc's
// "-- name:"), leaving out the test's own.
type namedQueries struct{ n atomic.Int64 }

func (c *namedQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(data.SQL, "-- name:") {
		c.n.Add(1)
	}
	return ctx
}

func (c *namedQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestApplyStatementsDoNotGrowWithTheCatalog: the same history (every scenario, so every
// kind of write) takes exactly as many statements with 20 tools of each kind as with one.
func TestApplyStatementsDoNotGrowWithTheCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, opts := range []catalog.ApplyOptions{{Validate: true}, {Review: true, Validate: true}} {
		counts := map[int]int64{}
		for _, copies := range []int{1, 20} {
			var c namedQueries
			pool, err := postgres.Connect(ctx, pgtest.NewDB(t), postgres.WithQueryTracer(&c))
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "src", Kind: "mcp_http", Config: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			var all []scenario
			for i := range copies {
				all = append(all, scenarios(fmt.Sprintf("t%d", i))...)
			}
			history(t, pool, src, all, opts)
			counts[copies] = c.n.Load()
		}
		t.Logf("review=%v: %d statements (4 syncs and the source)", opts.Review, counts[1])
		if counts[1] != counts[20] {
			t.Errorf("review=%v: %d statements for one tool of each kind, %d for 20", opts.Review, counts[1], counts[20])
		}
	}
}

func revisionsString(revs []revisionState) string {
	var b strings.Builder
	for _, r := range revs {
		fmt.Fprintf(&b, "\n  %s %s fields=%v created_now=%v decided=%v decided_now=%v", r.Action, r.Status, r.ChangedFields,
			r.CreatedNow, r.Decided, r.DecidedNow)
	}
	return b.String()
}

// goldenCase is what the golden files hold: the counts of a sync, and its outcome and state
// for the tools whose names start with one prefix.
type goldenCase struct {
	Result outcome
	State  sourceState
}

func golden(res outcome, st sourceState, prefix string) goldenCase {
	in := func(name string) bool { return strings.HasPrefix(name, prefix) }
	g := goldenCase{
		Result: outcome{Created: res.Created, Updated: res.Updated, Deleted: res.Deleted, Unchanged: res.Unchanged,
			Pending: res.Pending, Changed: []string{}, Invalid: []catalog.InvalidToolError{}},
		State: sourceState{Tools: map[string]toolState{}, Revisions: map[string][]revisionState{}},
	}
	for _, n := range res.Changed {
		if in(n) {
			g.Result.Changed = append(g.Result.Changed, n)
		}
	}
	for _, bad := range res.Invalid {
		if in(bad.Name) {
			g.Result.Invalid = append(g.Result.Invalid, bad)
		}
	}
	for n, ts := range st.Tools {
		if in(n) {
			g.State.Tools[n] = ts
		}
	}
	for n, revs := range st.Revisions {
		if in(n) {
			g.State.Revisions[n] = revs
		}
	}
	return g
}

func checkGolden(t *testing.T, path string, got goldenCase) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("outcome differs from %s (go test -update rewrites it):\n%s", path, data)
	}
}

// TestApplyAfterSourceDeletion: a sync that starts while its source is being deleted waits
// for the deletion and then fails with SourceDeletedError, writing nothing.
func TestApplyAfterSourceDeletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	src, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "gone", Kind: "mcp_http", Config: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	del, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer del.Rollback(ctx) //nolint:errcheck
	if _, err := del.Exec(ctx, `DELETE FROM sources WHERE id = $1`, src.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := catalog.Apply(ctx, tx, src, []catalog.Tool{{Name: "a", InputSchema: json.RawMessage(emptySchema)}}, catalog.ApplyOptions{})
			return err
		})
	}()
	// Commit the deletion once the sync waits for it.
	pgtest.WaitLockWait(t, pool, "LockSourceRow")
	if err := del.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var gone *catalog.SourceDeletedError
	if err := <-done; !errors.As(err, &gone) || gone.Source != "gone" {
		t.Fatalf("got %v, want *catalog.SourceDeletedError", err)
	}
}

// Tools whose names are not catalog names are stored under their catalog name, with the
// original kept for calling them; a re-sync finds them unchanged. When two originals get
// one catalog name, the stored tool keeps it, else the one named so verbatim; the other is
// left out (or, for an import, the whole catalog refused).
func TestApplyNormalizesNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	tool := func(name string) catalog.Tool {
		return catalog.Tool{Name: name, Description: "Tool " + name + ".", InputSchema: json.RawMessage(emptySchema)}
	}
	verbatim := catalog.CatalogName("x y") // x_y-<hash>, itself a valid name
	apply := func(name string, tools []catalog.Tool, validate bool) (catalog.Result, map[string]string) {
		t.Helper()
		var res catalog.Result
		stored := map[string]string{}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			src, err := db.New(tx).EnsureCatalogSource(ctx, name)
			if err != nil {
				return err
			}
			if res, err = catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{Validate: validate}); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT name, original_name FROM tools WHERE source_id = $1`, src.ID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var n, o string
				if err := rows.Scan(&n, &o); err != nil {
					return err
				}
				stored[n] = o
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatalf("apply to %s: %v", name, err)
		}
		return res, stored
	}
	invalid := func(res catalog.Result) string {
		var s []string
		for _, bad := range res.Invalid {
			s = append(s, bad.Name+": "+bad.Reason)
		}
		return strings.Join(s, "; ")
	}

	res, stored := apply("srv", []catalog.Tool{tool("PDF&URLTool"), tool("x y"), tool("ok")}, true)
	want := map[string]string{"srv__" + catalog.CatalogName("PDF&URLTool"): "PDF&URLTool", "srv__" + verbatim: "x y", "srv__ok": "ok"}
	if res.Created != 3 || !reflect.DeepEqual(stored, want) {
		t.Fatalf("first sync: %+v, stored %v; want 3 created as %v", res, stored, want)
	}
	if res, _ = apply("srv", []catalog.Tool{tool("PDF&URLTool"), tool("x y"), tool("ok")}, true); res.Unchanged != 3 {
		t.Fatalf("second sync: %+v, want 3 unchanged", res)
	}
	// A new tool named verbatim like the stored one's catalog name is left out.
	res, stored = apply("srv", []catalog.Tool{tool(verbatim), tool("PDF&URLTool"), tool("x y"), tool("ok")}, true)
	if res.Unchanged != 3 || res.Created != 0 || invalid(res) != verbatim+`: its catalog name "`+verbatim+`" is taken by "x y"` || !reflect.DeepEqual(stored, want) {
		t.Fatalf("clash with a stored tool: %+v (%s), stored %v", res, invalid(res), stored)
	}
	// Nor does it take the name while the stored tool's new definition is invalid (and the
	// stored one stays).
	broken := tool("x y")
	broken.InputSchema = json.RawMessage(`{"type":"string"}`)
	res, stored = apply("srv", []catalog.Tool{tool(verbatim), tool("PDF&URLTool"), broken, tool("ok")}, true)
	if res.Unchanged != 2 || res.Created != 0 || !strings.Contains(invalid(res), verbatim+`: its catalog name "`+verbatim+`" is taken by "x y"`) ||
		!reflect.DeepEqual(stored, want) {
		t.Fatalf("clash with a stored tool listed invalid: %+v (%s), stored %v", res, invalid(res), stored)
	}
	// Between two new tools the verbatim name wins, in either order.
	for i, tools := range [][]catalog.Tool{{tool("x y"), tool(verbatim)}, {tool(verbatim), tool("x y")}} {
		name := fmt.Sprintf("fresh%d", i)
		res, stored := apply(name, tools, true)
		if res.Created != 1 || invalid(res) != `x y: its catalog name "`+verbatim+`" is taken by "`+verbatim+`"` ||
			!reflect.DeepEqual(stored, map[string]string{name + "__" + verbatim: verbatim}) {
			t.Errorf("%s: %+v (%s), stored %v", name, res, invalid(res), stored)
		}
	}
	// An import (tools validated beforehand) with a clash is refused whole.
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		src, err := db.New(tx).EnsureCatalogSource(ctx, "imported")
		if err != nil {
			return err
		}
		_, err = catalog.Apply(ctx, tx, src, []catalog.Tool{tool("x y"), tool(verbatim)}, catalog.ApplyOptions{})
		return err
	})
	var bad *catalog.InvalidToolError
	if !errors.As(err, &bad) || bad.Name != verbatim {
		t.Fatalf("import with a clash: got %v, want *InvalidToolError naming %s", err, verbatim)
	}
}
