package profiles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/vectors"
)

// Re-weighting: a profile's tool vectors are recomputed from the stored component
// vectors into a new vector set in state 'building', without any embedding call, and the
// profile's current_set is switched to it in one transaction once it is complete. Searches
// only ever read current_set, so they see the old set or the new one, never a mix.

// ReweightBatch is how many tools one transaction of a re-weight recomputes.
const ReweightBatch = 1000

// catchUpMargin widens the catch-up pass to components written shortly before the set was
// created: an enrichment transaction that started before the set existed stamps its
// components with its start time, yet may commit after a batch read the older ones.
const catchUpMargin = time.Minute

// dropLockTimeout bounds each wait for the moment of ACCESS EXCLUSIVE lock on tool_vectors
// that dropping a set's partition needs: searches queue behind a waiting DROP, so it gives
// up after this long and tries again (dropAttempts times), letting them through.
const dropLockTimeout = "1s"

// dropAttempts is how many times dropping a partition is tried before giving up.
const dropAttempts = 30

// SetNotBuildingError is returned when a re-weight is asked to build a set that is no longer
// being built (it failed or was retired).
type SetNotBuildingError struct {
	SetID int64
	State db.VectorSetState
}

func (e *SetNotBuildingError) Error() string {
	return fmt.Sprintf("vector set %d is %s, not building", e.SetID, e.State)
}

// ReweightStart is what StartReweight did.
type ReweightStart struct {
	JobID int64 `json:"job_id"`
	SetID int64 `json:"set_id"`
	// Duplicate is true when a re-weight of the profile was already queued or running: its
	// job and set are returned.
	Duplicate bool `json:"duplicate"`
}

// BeginReweight returns the profile's building vector set, creating one (total = the
// number of tools) when there is none. A set left building by an interrupted run is
// reused, so the new run resumes it.
func BeginReweight(ctx context.Context, tx pgx.Tx, profile string) (db.VectorSet, error) {
	q := db.New(tx)
	p, err := q.LockProfileByName(ctx, profile)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.VectorSet{}, &NotFoundError{Name: profile}
	}
	if err != nil {
		return db.VectorSet{}, err
	}
	if _, err := tdwa.ParseProfile(p.Strategy, p.Weights); err != nil {
		return db.VectorSet{}, err
	}
	set, err := q.GetBuildingSet(ctx, p.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return q.CreateBuildingSet(ctx, p.ID)
	}
	return set, err
}

// ReweightQueue queues the job that builds a profile's vector set (package jobs implements
// it: the job is River's, and this package cannot import the one that defines it).
type ReweightQueue interface {
	// ReweightTx queues, inside tx, the build of set setID for profile. When a build of the
	// profile is already queued or running, it queues nothing and returns that job with the
	// set it builds, and duplicate set.
	ReweightTx(ctx context.Context, tx pgx.Tx, profile string, setID int64) (jobID, buildingSet int64, duplicate bool, err error)
}

// StartReweight queues the profile's re-weight job, with its building set, in one
// transaction. When one is already queued or running, that job and its set are returned.
func StartReweight(ctx context.Context, pool *pgxpool.Pool, queue ReweightQueue, profile string) (ReweightStart, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return ReweightStart{}, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	set, err := BeginReweight(ctx, tx, profile)
	if err != nil {
		return ReweightStart{}, err
	}
	jobID, building, dup, err := queue.ReweightTx(ctx, tx, profile, set.ID)
	if err != nil {
		return ReweightStart{}, err
	}
	if dup {
		// Nothing of this call is kept: the running job owns its set.
		return ReweightStart{JobID: jobID, SetID: building, Duplicate: true}, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return ReweightStart{}, err
	}
	return ReweightStart{JobID: jobID, SetID: set.ID}, nil
}

// ReweightOptions tunes Reweight.
type ReweightOptions struct {
	// BatchSize is the number of tools per transaction; 0 means ReweightBatch.
	BatchSize int
	// OnProgress is called after each committed batch with the set's done and total.
	OnProgress func(done, total int)
	Logger     *slog.Logger
}

// Reweight fills the building vector set setID with every tool's vector under the set's
// profile, computed from the stored component vectors (no embedding call), then makes it
// the profile's current set and deletes the previous one. Each batch is one transaction
// and skips tools already in the set, so a run interrupted at any point is resumed by
// calling Reweight again. Vectors are written by package vectors (FillSet): a vector an
// enrichment job wrote meanwhile is fresher and kept. A set that is already ready is done.
func Reweight(ctx context.Context, pool *pgxpool.Pool, setID int64, opts ReweightOptions) error {
	batch := opts.BatchSize
	if batch <= 0 {
		batch = ReweightBatch
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := db.New(pool)
	set, err := q.GetVectorSet(ctx, setID)
	if err != nil {
		return fmt.Errorf("vector set %d: %w", setID, err)
	}
	switch set.State {
	case db.VectorSetReady:
		return nil
	case db.VectorSetBuilding:
	default:
		return &SetNotBuildingError{SetID: setID, State: set.State}
	}
	// the weights the set was made with, whatever the profile says now
	prof, err := tdwa.ParseProfile(set.Strategy, set.Weights)
	if err != nil {
		return fmt.Errorf("vector set %d: %w", setID, err)
	}
	if err := q.StartSetBuild(ctx, setID); err != nil {
		return err
	}
	if set, err = q.GetVectorSet(ctx, setID); err != nil {
		return err
	}
	start := time.Now()
	log.Info("re-weight started", "set", setID, "tools", set.Total)

	if err := fillSet(ctx, pool, set, prof, batch, opts.OnProgress); err != nil {
		return err
	}
	changed, err := catchUp(ctx, pool, set, prof, batch)
	if err != nil {
		return err
	}

	// The partition was filled without an index; build it in bulk now (much faster than
	// inserting 50,000 vectors into an HNSW graph one by one). Enrichment writes to this set
	// wait for the build (CREATE INDEX holds SHARE on the partition only); searches do not
	// read it yet.
	indexStart := time.Now()
	if _, err := q.BuildSetIndex(ctx, setID); err != nil {
		return fmt.Errorf("vector set %d: build index: %w", setID, err)
	}
	log.Info("re-weight indexed", "set", setID, "duration_ms", time.Since(indexStart).Milliseconds())

	old, err := switchSet(ctx, pool, set)
	if err != nil {
		return err
	}
	log.Info("re-weight switched", "set", setID, "retired", old, "tools", set.Total, "catch_up", changed,
		"duration_ms", time.Since(start).Milliseconds())
	if old != 0 {
		return deleteSet(ctx, pool, old)
	}
	return nil
}

// fillSet computes the set's vector of every tool that has none in it yet, batch tools a
// transaction, in id order, recording the progress with each batch.
func fillSet(ctx context.Context, pool *pgxpool.Pool, set db.VectorSet, prof tdwa.Profile, batch int, onProgress func(done, total int)) error {
	q := db.New(pool)
	scanned := 0
	for cursor := int64(0); ; {
		ids, err := q.ListToolIDsAfter(ctx, db.ListToolIDsAfterParams{ID: cursor, Limit: int32(batch)})
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		cursor = ids[len(ids)-1]
		scanned += len(ids)
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tq := db.New(tx)
			rows, err := tq.ListComponentVectorsMissingFromSet(ctx, db.ListComponentVectorsMissingFromSetParams{ToolIds: ids, SetID: set.ID})
			if err != nil {
				return err
			}
			if _, err := vectors.FillSet(ctx, tq, set.ID, prof, rows); err != nil {
				return err
			}
			return tq.SetBuildProgress(ctx, db.SetBuildProgressParams{ID: set.ID, Done: int32(scanned)})
		})
		if err != nil {
			return err
		}
		if onProgress != nil {
			onProgress(min(scanned, int(set.Total)), int(set.Total))
		}
	}
}

// catchUp recomputes, from their components as they are now, the set's vectors of the
// tools whose components changed after the set was created (or just before), and returns
// how many tools it recomputed.
func catchUp(ctx context.Context, pool *pgxpool.Pool, set db.VectorSet, prof tdwa.Profile, batch int) (int, error) {
	changed, err := db.New(pool).ListToolsChangedSince(ctx, set.CreatedAt.Add(-catchUpMargin))
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(changed); i += batch {
		ids := changed[i:min(i+batch, len(changed))]
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			tq := db.New(tx)
			rows, err := tq.ListComponentVectors(ctx, ids)
			if err != nil {
				return err
			}
			_, err = vectors.ReplaceInSet(ctx, tq, set.ID, prof, rows)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return len(changed), nil
}

// switchSet makes the set its profile's current set and retires the previous one, in one
// transaction. It returns the retired set's id (0 when there was none).
func switchSet(ctx context.Context, pool *pgxpool.Pool, set db.VectorSet) (int64, error) {
	var old int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		p, err := q.LockProfileByID(ctx, set.ProfileID)
		if err != nil {
			return err
		}
		cur, err := q.GetVectorSet(ctx, set.ID)
		if err != nil {
			return err
		}
		if cur.State != db.VectorSetBuilding {
			return &SetNotBuildingError{SetID: set.ID, State: cur.State}
		}
		if err := q.FinishSet(ctx, set.ID); err != nil {
			return err
		}
		if p.CurrentSet.Valid && p.CurrentSet.Int64 != set.ID {
			old = p.CurrentSet.Int64
			if err := q.RetireSet(ctx, old); err != nil {
				return err
			}
		}
		return q.SetProfileCurrentSet(ctx, db.SetProfileCurrentSetParams{ID: p.ID, CurrentSet: pgtype.Int8{Int64: set.ID, Valid: true}})
	})
	return old, err
}

// deleteSet drops a retired set's partition, then deletes the set.
func deleteSet(ctx context.Context, pool *pgxpool.Pool, setID int64) error {
	if err := dropPartition(ctx, pool, setID); err != nil {
		return err
	}
	return db.New(pool).DeleteVectorSet(ctx, setID)
}

// dropPartition drops the partition of a set that is no longer written to (retired or
// failed): all its vectors and its index at once, instead of deleting them row by row. It
// first waits for the enrichment transactions that listed the set as writable before it
// changed state, then drops with a bounded wait for the lock on tool_vectors (retried).
func dropPartition(ctx context.Context, pool *pgxpool.Pool, setID int64) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			q := db.New(tx)
			if _, err := q.LockVectorSetForDrop(ctx, setID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", dropLockTimeout); err != nil {
				return err
			}
			return q.DropSetPartition(ctx, setID)
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != pgerrcode.LockNotAvailable || attempt == dropAttempts {
			if err != nil {
				return fmt.Errorf("vector set %d: drop partition: %w", setID, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FailReweight marks a building set failed with cause and drops its partition. The
// profile's current set is not touched. A set no longer building is left alone.
func FailReweight(ctx context.Context, pool *pgxpool.Pool, setID int64, cause error) error {
	msg := cause.Error()
	n, err := db.New(pool).FailSet(ctx, db.FailSetParams{ID: setID, Error: &msg})
	if err != nil || n == 0 {
		return err
	}
	return dropPartition(ctx, pool, setID)
}

// BuildProgress is how far the build of a vector set has come.
type BuildProgress struct {
	SetID int64   `json:"set_id"`
	State string  `json:"state"` // building, ready, retired, failed; "deleted" once a newer re-weight replaced it
	Done  int     `json:"done"`
	Total int     `json:"total"`
	Error *string `json:"error,omitempty"`
}

// Progress returns the progress of the build of set setID; a set deleted since (a newer
// re-weight replaced it) is reported in state "deleted".
func Progress(ctx context.Context, pool *pgxpool.Pool, setID int64) (BuildProgress, error) {
	set, err := db.New(pool).GetVectorSet(ctx, setID)
	if errors.Is(err, pgx.ErrNoRows) {
		return BuildProgress{SetID: setID, State: "deleted"}, nil
	}
	if err != nil {
		return BuildProgress{}, err
	}
	return BuildProgress{SetID: set.ID, State: string(set.State), Done: int(set.Done), Total: int(set.Total), Error: set.Error}, nil
}

// RunReweight re-weights the profile in this process, through the same code as the job
// (`toolgate profiles reweight --wait`):
// it begins (or resumes) the profile's building set and builds it. When the build fails
// or ctx is cancelled the set is marked failed and the profile keeps its current set.
// It returns the set built.
func RunReweight(ctx context.Context, pool *pgxpool.Pool, profile string, opts ReweightOptions) (int64, error) {
	var set db.VectorSet
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		set, err = BeginReweight(ctx, tx, profile)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := Reweight(ctx, pool, set.ID, opts); err != nil {
		if ferr := FailReweight(context.WithoutCancel(ctx), pool, set.ID, err); ferr != nil {
			return set.ID, errors.Join(err, ferr)
		}
		return set.ID, err
	}
	return set.ID, nil
}
