package search_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/experiments"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestSearchOnReadReplica runs searches on a real hot standby (streaming replication from
// a private primary): the statement is the primary's, unchanged, the results are the
// primary's, the log rows land on the primary, and the standby refuses only the log row.
func TestSearchOnReadReplica(t *testing.T) {
	t.Parallel()
	ctx := auth.WithCaller(context.Background(), &auth.Caller{Name: "agent", KeyID: 42, Scope: auth.ScopeSearch})
	srv := pgtest.NewServer(t)
	migrating := connect(t, srv.URL("toolgate"))
	if err := postgres.MigrateUp(ctx, migrating); err != nil {
		t.Fatal(err)
	}
	migrating.Close()
	// A new pool: connections register the pgvector types if the extension exists.
	primary := connect(t, srv.URL("toolgate"))
	fill(t, primary)
	standby := srv.NewStandby()
	read := connect(t, standby.URL("toolgate"))
	waitReplay(t, primary, read)

	onPrimary := newService(primary)
	onReplica := search.New(primary, testEmbedder, search.DefaultSettings(), discard(), search.WithReadPool(read))
	for _, r := range []search.Request{
		{Query: "latest stock price", Mode: search.ModeLexical, K: 3},
		{Query: rainQuery, Mode: search.ModeVector, K: 3},
		{Query: "send an email message", Mode: search.ModeHybrid, K: 3, SessionID: "s-1", Endpoint: search.EndpointFindTools},
		{Query: "get_weather", K: 5},
		{Query: "stock price and the weather", Plan: plan.ModeFull, K: 4},
	} {
		want := mustSearch(t, ctx, onPrimary, r)
		got := mustSearch(t, ctx, onReplica, r)
		if strings.Join(names(got), ",") != strings.Join(names(want), ",") || len(got.Results) == 0 {
			t.Errorf("%q: replica %v, primary %v", r.Query, names(got), names(want))
			continue
		}
		for i := range got.Results {
			if got.Results[i].Score != want.Results[i].Score || !reflect.DeepEqual(got.Results[i].Tool, want.Results[i].Tool) {
				t.Errorf("%q result %d: replica %+v, primary %+v", r.Query, i, got.Results[i], want.Results[i])
			}
		}
		// The replica search's log row is on the primary, with the same results.
		var mode, results string
		var count int
		var replica bool
		var keyID int64
		if err := primary.QueryRow(ctx, `SELECT mode, results::text, result_count, (timings->>'replica')::bool, caller_key_id
			FROM search_log WHERE id = $1`, got.SearchID).Scan(&mode, &results, &count, &replica, &keyID); err != nil {
			t.Fatalf("%q: log row %d on the primary: %v", r.Query, got.SearchID, err)
		}
		if mode != string(got.Mode) || count != len(got.Results) || !replica || !strings.Contains(results, `"name": "`+got.Results[0].Name+`"`) || keyID != 42 {
			t.Errorf("%q: log row mode %s count %d replica %v key %d results %s", r.Query, mode, count, replica, keyID, results)
		}
		// the serving profile and the endpoint, as the primary's statement logs them
		var profile, endpoint, wantProfile, wantEndpoint string
		if err := primary.QueryRow(ctx, `SELECT r.profile, r.endpoint, p.profile, p.endpoint FROM search_log r, search_log p
			WHERE r.id = $1 AND p.id = $2`, got.SearchID, want.SearchID).Scan(&profile, &endpoint, &wantProfile, &wantEndpoint); err != nil ||
			profile != wantProfile || endpoint != wantEndpoint || profile != "default" || endpoint != string(cmp.Or(r.Endpoint, search.EndpointInternal)) {
			t.Errorf("%q: replica logged profile %s endpoint %s, primary %s %s (%v)", r.Query, profile, endpoint, wantProfile, wantEndpoint, err)
		}
		if r.Plan == plan.ModeFull && !strings.Contains(results, `"intent"`) {
			t.Errorf("%q: planned search logged without intents: %s", r.Query, results)
		}
		// Explained on the replica, as on the primary.
		r.Explain = true
		checkExplained(t, read, mustSearch(t, ctx, onReplica, r), nil)
	}
	if _, err := onReplica.RecordFeedback(ctx, callerOf(ctx), lastSearchID(t, primary), []search.Feedback{{Name: "beta__get_weather", Success: ptr(true)}}); err != nil {
		t.Errorf("feedback on a replica search: %v", err)
	}

	// An A/B experiment routes replica searches as it routes the primary's: the replica's
	// statement picks the arm, the primary's log row records it. The candidate "twin" holds
	// a copy of the default profile's vectors (written by hand as fill writes those).
	twin := testfactory.Weights(ctx, t, primary, "twin", map[string]float64{"name": 1})
	q := db.New(primary)
	p, err := q.GetProfileByName(ctx, twin.Name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: p.ID, State: db.VectorSetReady})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, primary, `INSERT INTO tool_vectors (set_id, tool_id, embedding) SELECT $1, tool_id, embedding FROM tool_vectors
		WHERE set_id = (SELECT current_set FROM weight_profiles WHERE name = 'default')`, set)
	if err := q.SetProfileCurrentSet(ctx, db.SetProfileCurrentSetParams{ID: p.ID, CurrentSet: pgtype.Int8{Int64: set, Valid: true}}); err != nil {
		t.Fatal(err)
	}
	e, err := experiments.Start(ctx, primary, experiments.Definition{Name: "replica", Candidate: "twin", Share: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	waitReplay(t, primary, read)
	caller := callerOf(ctx)
	for i := range 8 {
		session := fmt.Sprintf("replica-%d", i)
		got := mustSearch(t, ctx, onReplica, search.Request{Query: rainQuery, Mode: search.ModeVector, K: 3, SessionID: session, Explain: true})
		arm := experiments.ArmOf(e, experiments.UnitValue(e.Unit, session, caller.KeyID, caller.Name))
		profile := map[db.ExperimentArm]string{experiments.ArmControl: "default", experiments.ArmCandidate: "twin"}[arm]
		if got.Experiment == nil || got.Experiment.ID != e.ID || got.Experiment.Arm != arm || got.Experiment.Profile != profile {
			t.Fatalf("%s: experiment %+v, want arm %s (%s)", session, got.Experiment, arm, profile)
		}
		if got.Profile != profile || got.Explain.Profile != profile {
			t.Errorf("%s: served by %q, explained as %q, want the arm's %q", session, got.Profile, got.Explain.Profile, profile)
		}
		checkExplained(t, read, got, nil)
		var loggedID int64
		var loggedArm, loggedProfile string
		if err := primary.QueryRow(ctx, `SELECT experiment_id, arm, profile FROM search_log WHERE id = $1`, got.SearchID).
			Scan(&loggedID, &loggedArm, &loggedProfile); err != nil || loggedID != e.ID || loggedArm != string(arm) || loggedProfile != profile {
			t.Fatalf("%s: logged %d %s %s (%v), want %d %s %s", session, loggedID, loggedArm, loggedProfile, err, e.ID, arm, profile)
		}
	}

	// The standby is read-only: a service with no primary but it runs the statement there,
	// and fails only to write the log row.
	_, err = newService(read).Search(ctx, callerOf(ctx), search.Request{Query: "latest stock price"})
	if err == nil || !strings.Contains(err.Error(), "write the log row") || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("search with the standby as its primary: %v, want the log row's read-only transaction error", err)
	}
}

func connect(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// waitReplay waits until the standby of read has replayed everything the primary wrote.
func waitReplay(t *testing.T, primary, read *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var lsn string
	if err := primary.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var done bool
		if err := read.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not replay up to %s in 30 s", lsn)
		}
	}
}

func lastSearchID(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var id int64
	// ids are a keyed permutation (no order): the newest row is the last written
	if err := pool.QueryRow(context.Background(), `SELECT id FROM search_log ORDER BY created_at DESC LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func ptr[T any](v T) *T { return &v }
