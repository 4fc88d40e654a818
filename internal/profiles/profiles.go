// Package profiles administers TDWA weight profiles: their definitions, which one is active,
// what their vector sets hold, and re-weighting (reweight.go): building a profile's vectors
// from the stored component vectors into a new vector set and switching to it. The reweight
// job of package jobs runs Reweight; docs/vector-sets.md draws a set's life cycle.
package profiles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/vectors"
)

// NotFoundError is returned for an unknown profile name.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no weight profile named %q", e.Name) }
func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }

// ActiveError is returned when deleting the active profile.
type ActiveError struct{ Name string }

func (e *ActiveError) Error() string {
	return fmt.Sprintf("weight profile %q is active; activate another one first", e.Name)
}

func (e *ActiveError) Is(target error) bool { return target == derrors.Conflict }
func (e *ActiveError) Code() string         { return "profile_active" }

// NotBuiltError is returned when activating a profile whose current set holds no vectors
// while the catalog has embedded tools: searches would find nothing.
type NotBuiltError struct{ Name string }

func (e *NotBuiltError) Error() string {
	return fmt.Sprintf("weight profile %q has no vectors yet; re-weight it first", e.Name)
}

func (e *NotBuiltError) Is(target error) bool { return target == derrors.Conflict }
func (e *NotBuiltError) Code() string         { return "profile_not_built" }

// InExperimentError is returned when deleting a profile that a running A/B experiment
// routes searches to (docs/experiments.md).
type InExperimentError struct{ Name, Experiment string }

func (e *InExperimentError) Error() string {
	return fmt.Sprintf("weight profile %q is an arm of the running experiment %q; stop the experiment first", e.Name, e.Experiment)
}

func (e *InExperimentError) Is(target error) bool { return target == derrors.Conflict }
func (e *InExperimentError) Code() string         { return "profile_in_experiment" }

// ValidName is the database's constraint on profile names (and on experiment names, which
// follow the same rule).
var ValidName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Set is a vector set as shown to operators.
type Set struct {
	ID         int64             `json:"id"`
	State      db.VectorSetState `json:"state"`
	Total      int               `json:"total"`
	Done       int               `json:"done"`
	Vectors    int               `json:"vectors"`
	Error      *string           `json:"error,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
	// IndexDeferred is true while a ready set waits for its HNSW index (the vector_index
	// job, after an enrichment burst): it holds every vector and is searched exactly.
	IndexDeferred bool `json:"index_deferred"`
}

// View is a profile with its current set and the set being built, if any.
type View struct {
	Name       string             `json:"name"`
	Strategy   string             `json:"strategy"`
	Weights    map[string]float64 `json:"weights"`
	Active     bool               `json:"active"`
	CurrentSet *Set               `json:"current_set"`
	Building   *Set               `json:"building"`
	// Fusion is the profile's own fusion weights, which its searches use instead of the
	// service's TOOLGATE_SEARCH_WEIGHT_LEXICAL / _VECTOR; nil when it has none (a tune that
	// scores the fused ranking sets them).
	Fusion *Fusion `json:"fusion"`
	// Tune is the evidence of the tune that made the profile; absent for other profiles.
	Tune      *Evidence `json:"tune,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Fusion are a profile's fusion weights of the lexical and the vector branch.
type Fusion struct {
	WeightLexical float64 `json:"weight_lexical"`
	WeightVector  float64 `json:"weight_vector"`
}

// Evidence is what the tune that made a profile measured (package tune): the held-out gain
// over its baseline with its confidence interval, and the label counts it used.
type Evidence struct {
	TuneID   int64           `json:"tune_id"`
	Baseline string          `json:"baseline"`
	Gain     json.RawMessage `json:"gain"`
	Labels   json.RawMessage `json:"labels"`
}

func view(ctx context.Context, q *db.Queries, p db.WeightProfile) (View, error) {
	v := View{Name: p.Name, Strategy: p.Strategy, Weights: map[string]float64{}, Active: p.IsActive, UpdatedAt: p.UpdatedAt}
	if err := json.Unmarshal(p.Weights, &v.Weights); err != nil {
		return v, fmt.Errorf("profile %s weights: %w", p.Name, err)
	}
	if p.WeightLexical.Valid && p.WeightVector.Valid {
		v.Fusion = &Fusion{WeightLexical: p.WeightLexical.Float64, WeightVector: p.WeightVector.Float64}
	}
	if p.TuneID.Valid {
		e, err := q.TuneEvidence(ctx, p.TuneID.Int64)
		if err != nil {
			return v, fmt.Errorf("profile %s tune: %w", p.Name, err)
		}
		v.Tune = &Evidence{TuneID: e.ID, Baseline: e.Baseline, Gain: e.Gain, Labels: e.Labels}
	}
	sets, err := q.ListProfileSets(ctx, p.ID)
	if err != nil {
		return v, err
	}
	for _, s := range sets {
		set := &Set{ID: s.ID, State: s.State, Total: int(s.Total), Done: int(s.Done), Vectors: int(s.Vectors),
			Error: s.Error, CreatedAt: s.CreatedAt, FinishedAt: s.FinishedAt, IndexDeferred: s.IndexDeferred}
		if p.CurrentSet.Valid && s.ID == p.CurrentSet.Int64 {
			v.CurrentSet = set
		} else {
			v.Building = set
		}
	}
	return v, nil
}

// List returns every profile by name.
func List(ctx context.Context, pool *pgxpool.Pool) ([]View, error) {
	q := db.New(pool)
	ps, err := q.ListProfiles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(ps))
	for _, p := range ps {
		v, err := view(ctx, q, p)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Get returns one profile.
func Get(ctx context.Context, pool *pgxpool.Pool, name string) (View, error) {
	q := db.New(pool)
	p, err := q.GetProfileByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return View{}, &NotFoundError{Name: name}
	}
	if err != nil {
		return View{}, err
	}
	return view(ctx, q, p)
}

// Put creates the profile or changes its definition, after validating it: its strategy and
// weights, and its fusion weights (nil: none, its searches use the settings'). The stored
// vectors are not changed: they follow the new definition once a re-weight completes.
// created says whether the profile is new.
func Put(ctx context.Context, pool *pgxpool.Pool, name string, p tdwa.Profile, fusion *Fusion) (v View, created bool, err error) {
	if !ValidName.MatchString(name) {
		return View{}, false, &tdwa.InvalidProfileError{Reason: fmt.Sprintf("name %q must match %s", name, ValidName)}
	}
	if p.Weights == nil {
		p.Weights = map[string]float64{}
	}
	if err := p.Validate(); err != nil {
		return View{}, false, err
	}
	var wl, wv pgtype.Float8
	if fusion != nil {
		for _, x := range []float64{fusion.WeightLexical, fusion.WeightVector} {
			if !(x >= 0 && x <= 100) {
				return View{}, false, &tdwa.InvalidProfileError{Reason: "fusion weights must be 0 to 100"}
			}
		}
		wl, wv = pgtype.Float8{Float64: fusion.WeightLexical, Valid: true}, pgtype.Float8{Float64: fusion.WeightVector, Valid: true}
	}
	w, err := json.Marshal(p.Weights)
	if err != nil {
		return View{}, false, err
	}
	q := db.New(pool)
	row, err := q.PutProfile(ctx, db.PutProfileParams{Name: name, Strategy: p.Strategy, Weights: w, WeightLexical: wl, WeightVector: wv})
	if err != nil {
		return View{}, false, err
	}
	v, err = view(ctx, q, db.WeightProfile{ID: row.ID, Name: row.Name, Strategy: row.Strategy, Weights: row.Weights,
		IsActive: row.IsActive, CurrentSet: row.CurrentSet, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, TuneID: row.TuneID,
		WeightLexical: row.WeightLexical, WeightVector: row.WeightVector})
	return v, row.Created, err
}

// Delete deletes an inactive profile with its vector sets. A profile of a running A/B
// experiment is refused; a stopped experiment keeps the profile's name in its report.
func Delete(ctx context.Context, pool *pgxpool.Pool, name string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		// FOR UPDATE: an experiment starting now holds the row FOR KEY SHARE until it is
		// written, so this waits for it and then sees it.
		p, err := lock(ctx, q, name)
		if err != nil {
			return err
		}
		if p.IsActive {
			return &ActiveError{Name: name}
		}
		exp, err := q.ProfileRunningExperiment(ctx, p.ID)
		if err == nil {
			return &InExperimentError{Name: name, Experiment: exp}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return q.DeleteProfile(ctx, p.ID)
	})
}

// Activate makes the profile the active one (the one searches use by default) and every
// other profile inactive, in one transaction. A deferred index of its set is built first
// (BuildIndex): the active profile's searches walk an index.
func Activate(ctx context.Context, pool *pgxpool.Pool, name string) (View, error) {
	if err := BuildIndex(ctx, pool, name); err != nil {
		return View{}, err
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		p, err := lock(ctx, q, name)
		if err != nil {
			return err
		}
		built, err := q.ProfileSearchable(ctx, p.ID)
		if err != nil {
			return err
		}
		if !built {
			return &NotBuiltError{Name: name}
		}
		if err := q.DeactivateProfiles(ctx, p.ID); err != nil {
			return err
		}
		return q.ActivateProfile(ctx, p.ID)
	})
	if err != nil {
		return View{}, err
	}
	return Get(ctx, pool, name)
}

func lock(ctx context.Context, q *db.Queries, name string) (db.WeightProfile, error) {
	p, err := q.LockProfileByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, &NotFoundError{Name: name}
	}
	return p, err
}

// BuildIndex builds the HNSW index of the profile's current set now if it was deferred
// (vectors.BuildDeferredIndex), for what compares or serves a profile on its latency (its
// activation, an A/B experiment): the set is complete either way, and once built an index
// stays. An unknown profile or one without a set is left to the caller's own checks.
func BuildIndex(ctx context.Context, pool *pgxpool.Pool, name string) error {
	p, err := db.New(pool).GetProfileByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !p.CurrentSet.Valid {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = vectors.BuildDeferredIndex(ctx, pool, p.CurrentSet.Int64)
	return err
}
