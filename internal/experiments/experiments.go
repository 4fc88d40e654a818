// Package experiments runs A/B experiments between weight profiles (docs/experiments.md):
// while an experiment runs, the searches that name no profile and run the vector branch are
// routed, by a stable hash of their unit (MCP session or API key), to a candidate profile's
// vectors or to a control profile's, and each search_log row records its arm. The arms are
// compared on the implicit labels (search_labels) with their uncertainty, so that an
// operator activates a profile on evidence.
//
// The routing itself is in the Search statement (sql/queries/search.sql, CTE exp), so that a
// search costs no extra round trip and every process (and a read replica) sees the same
// experiment: all state is in PostgreSQL. This package starts, lists, reports and stops
// experiments, and mirrors the statement's assignment in Go (Bucket, UnitValue, ArmOf).
package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/profiles"
)

// Unit is what a search is assigned to an arm by (profile_experiments.unit).
type Unit = db.ExperimentUnit

const (
	// UnitSession assigns by the search's session (the MCP session of find_tools, or the
	// session_id of POST /search); a search without one falls back to its key.
	UnitSession = db.ExperimentBySession
	// UnitKey assigns by the caller's API key; without a key (open mode, stdio), by the
	// caller's name.
	UnitKey = db.ExperimentByKey
)

// The arms (search_log.arm).
const (
	ArmControl   = db.ArmControl
	ArmCandidate = db.ArmCandidate
)

// Bucket is toolgate_ab_bucket(experiment, unit) (sql/functions/experiments.sql): the first
// 52 bits of SHA-256(experiment || ':' || unit) as a number in [0, 1), exact in a float64. A
// unit whose bucket is below the experiment's share is in the candidate arm.
func Bucket(experimentID int64, unit string) float64 {
	sum := sha256.Sum256([]byte(strconv.FormatInt(experimentID, 10) + ":" + unit))
	return float64(binary.BigEndian.Uint64(sum[:8])>>12) / (1 << 52)
}

// UnitValue is the unit value the Search statement hashes for a search with this session
// id, API key id (0: none) and caller name: "session:<id>" when the experiment's unit is
// the session and the search has one, else "key:<key id>", else "caller:<name>".
func UnitValue(unit Unit, sessionID string, keyID int64, caller string) string {
	switch {
	case unit == UnitSession && sessionID != "":
		return "session:" + sessionID
	case keyID != 0:
		return "key:" + strconv.FormatInt(keyID, 10)
	default:
		return "caller:" + caller
	}
}

// ArmOf is the arm of the experiment that a search of this unit value is routed to.
func ArmOf(e Experiment, unitValue string) db.ExperimentArm {
	if Bucket(e.ID, unitValue) < e.Share {
		return ArmCandidate
	}
	return ArmControl
}

// Experiment is an experiment's definition and state.
type Experiment struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Control   string     `json:"control"`
	Candidate string     `json:"candidate"`
	Share     float64    `json:"share"`
	Unit      Unit       `json:"unit"`
	Running   bool       `json:"running"`
	StartedAt time.Time  `json:"started_at"`
	StoppedAt *time.Time `json:"stopped_at"`
}

func fromRow(r db.ProfileExperiment) Experiment {
	return Experiment{ID: r.ID, Name: r.Name, Control: r.ControlProfile, Candidate: r.CandidateProfile,
		Share: r.Share, Unit: r.Unit, Running: r.StoppedAt == nil, StartedAt: r.StartedAt, StoppedAt: r.StoppedAt}
}

// InvalidError is a definition that cannot be an experiment.
type InvalidError struct{ Field, Reason string }

func (e *InvalidError) Error() string        { return fmt.Sprintf("experiment %s: %s", e.Field, e.Reason) }
func (e *InvalidError) Is(target error) bool { return target == derrors.Invalid }
func (e *InvalidError) Code() string         { return "invalid_experiment" }

// NotFoundError is returned for an unknown experiment name.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no experiment named %q", e.Name) }
func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }

// RunningError is returned when starting an experiment while another one runs: a search
// is in one experiment at most.
type RunningError struct{ Name string }

func (e *RunningError) Error() string {
	if e.Name == "" {
		return "another experiment is running; stop it first"
	}
	return fmt.Sprintf("experiment %q is running; stop it first", e.Name)
}
func (e *RunningError) Is(target error) bool { return target == derrors.Conflict }
func (e *RunningError) Code() string         { return "experiment_running" }

// ExistsError is returned when an experiment (running or stopped) already has the name.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("an experiment named %q exists; experiments keep their names for their reports", e.Name)
}
func (e *ExistsError) Is(target error) bool { return target == derrors.Conflict }
func (e *ExistsError) Code() string         { return "experiment_exists" }

// Definition is what starting an experiment takes.
type Definition struct {
	Name      string  `json:"name"`
	Candidate string  `json:"candidate"`
	Control   string  `json:"control,omitempty"` // empty: the active profile
	Share     float64 `json:"share"`             // of the units routed to the candidate, in (0, 1)
	Unit      Unit    `json:"unit"`              // empty: session
}

func (d *Definition) validate() error {
	if !profiles.ValidName.MatchString(d.Name) {
		return &InvalidError{Field: "name", Reason: fmt.Sprintf("%q must match %s", d.Name, profiles.ValidName)}
	}
	if d.Candidate == "" {
		return &InvalidError{Field: "candidate", Reason: "a candidate profile is required"}
	}
	if math.IsNaN(d.Share) || d.Share <= 0 || d.Share >= 1 {
		return &InvalidError{Field: "share", Reason: fmt.Sprintf("%v is not strictly between 0 and 1", d.Share)}
	}
	switch d.Unit {
	case "":
		d.Unit = UnitSession
	case UnitSession, UnitKey:
	default:
		return &InvalidError{Field: "unit", Reason: fmt.Sprintf("%q is not session or key", d.Unit)}
	}
	return nil
}

// Start starts an experiment: from now on the searches that name no profile and run the
// vector branch are routed to d.Candidate for a share d.Share of the units, to the control
// (d.Control, or the active profile) for the rest. Both profiles must exist, differ and
// hold vectors; no other experiment may be running.
func Start(ctx context.Context, pool *pgxpool.Pool, d Definition) (Experiment, error) {
	if err := d.validate(); err != nil {
		return Experiment{}, err
	}
	// The arms are compared on latency too: a deferred index of either set is built first.
	for _, name := range []string{d.Candidate, d.Control} {
		if err := profiles.BuildIndex(ctx, pool, name); err != nil {
			return Experiment{}, err
		}
	}
	var out Experiment
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		// The profiles are held FOR KEY SHARE until the experiment is written: a concurrent
		// delete waits, then sees the running experiment and refuses.
		cand, err := q.LockProfileForExperiment(ctx, d.Candidate)
		if errors.Is(err, pgx.ErrNoRows) {
			return &profiles.NotFoundError{Name: d.Candidate}
		} else if err != nil {
			return err
		}
		var ctl db.LockProfileForExperimentRow
		if d.Control == "" {
			a, err := q.LockActiveProfile(ctx)
			if errors.Is(err, pgx.ErrNoRows) {
				return &InvalidError{Field: "control", Reason: "no profile is active: name the control profile"}
			} else if err != nil {
				return err
			}
			ctl = db.LockProfileForExperimentRow(a)
		} else {
			ctl, err = q.LockProfileForExperiment(ctx, d.Control)
			if errors.Is(err, pgx.ErrNoRows) {
				return &profiles.NotFoundError{Name: d.Control}
			} else if err != nil {
				return err
			}
		}
		if ctl.ID == cand.ID {
			return &InvalidError{Field: "candidate", Reason: fmt.Sprintf("the candidate and the control are both %q", cand.Name)}
		}
		for _, p := range []db.LockProfileForExperimentRow{ctl, cand} {
			ok, err := q.ProfileSearchable(ctx, p.ID)
			if err != nil {
				return err
			}
			if !ok {
				return &profiles.NotBuiltError{Name: p.Name}
			}
		}
		if running, err := q.RunningExperiment(ctx); err == nil {
			return &RunningError{Name: running.Name}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		row, err := q.CreateExperiment(ctx, db.CreateExperimentParams{Name: d.Name,
			ControlProfileID: pgtype.Int8{Int64: ctl.ID, Valid: true}, CandidateProfileID: pgtype.Int8{Int64: cand.ID, Valid: true},
			ControlProfile: ctl.Name, CandidateProfile: cand.Name, Share: d.Share, Unit: d.Unit})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation {
			if pgErr.ConstraintName == "profile_experiments_one_running" {
				return &RunningError{} // started concurrently
			}
			return &ExistsError{Name: d.Name}
		}
		if err != nil {
			return err
		}
		out = fromRow(row)
		return nil
	})
	return out, err
}

// List returns every experiment, the running one first, then the most recent.
func List(ctx context.Context, pool *pgxpool.Pool) ([]Experiment, error) {
	rows, err := db.New(pool).ListExperiments(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Experiment, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Stop stops the experiment: searches are no longer routed by it (from the next search
// statement on). Stopping a stopped experiment changes nothing.
func Stop(ctx context.Context, pool *pgxpool.Pool, name string) (Experiment, error) {
	row, err := db.New(pool).StopExperiment(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return Experiment{}, &NotFoundError{Name: name}
	}
	if err != nil {
		return Experiment{}, err
	}
	return fromRow(row), nil
}

// Estimate is a metric's value with its standard error and 95% confidence interval (normal
// approximation, value ± 1.96·SE). In an arm, the standard error is clustered by unit
// (profile_experiment_arms, sql/functions/experiments.sql): the searches of a session (or
// key) are all in one arm and alike, so the unit, not the search, is the independent
// observation. Value is nil without observations, SE and CI95 below two units (for the mean
// rank, two units with a labelled search).
type Estimate struct {
	Value *float64    `json:"value"`
	SE    *float64    `json:"se"`
	CI95  *[2]float64 `json:"ci95"`
}

func estimate(v, se, lo, hi pgtype.Float8) Estimate {
	var e Estimate
	if v.Valid {
		e.Value = &v.Float64
	}
	if se.Valid {
		e.SE = &se.Float64
	}
	if lo.Valid && hi.Valid {
		e.CI95 = &[2]float64{lo.Float64, hi.Float64}
	}
	return e
}

// Arm is one arm's searches and label metrics (view profile_experiment_arms).
type Arm struct {
	Arm     db.ExperimentArm `json:"arm"`
	Profile string           `json:"profile"`
	// Units: the distinct sessions (or keys) whose searches the arm served, over which the
	// standard errors are clustered. Under about 30 units the intervals are approximate, and
	// rather too narrow (docs/experiments.md).
	Units    int64 `json:"units"`
	Searches int64 `json:"searches"`
	Labelled int64 `json:"labelled"`
	// LabelRate: the share of searches with at least one label.
	LabelRate Estimate `json:"label_rate"`
	// MRR: the mean over searches of 1/rank of the best-ranked label (0 when unlabelled).
	MRR Estimate `json:"mrr"`
	// MeanRank: the mean over labelled searches of the best-ranked label's rank.
	MeanRank Estimate `json:"mean_rank"`
}

// Difference is candidate − control of each metric, its standard error
// sqrt(se_candidate² + se_control²) (the arms' units are disjoint, so the arms are
// independent) and 95% interval (view profile_experiment_comparison).
type Difference struct {
	LabelRate Estimate `json:"label_rate"`
	MRR       Estimate `json:"mrr"`
	MeanRank  Estimate `json:"mean_rank"`
}

// Report is an experiment with the comparison of its arms.
type Report struct {
	Experiment
	Arms       []Arm      `json:"arms"` // control, then candidate
	Difference Difference `json:"difference"`
}

// Get returns the experiment with the comparison of its arms as of now.
func Get(ctx context.Context, pool *pgxpool.Pool, name string) (Report, error) {
	var rep Report
	// One snapshot for the definition, the arms and the difference.
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.GetExperiment(ctx, name)
		if errors.Is(err, pgx.ErrNoRows) {
			return &NotFoundError{Name: name}
		} else if err != nil {
			return err
		}
		rep.Experiment = fromRow(row)
		arms, err := q.ExperimentArms(ctx, row.ID)
		if err != nil {
			return err
		}
		for _, a := range arms {
			if a.Arm == nil {
				continue
			}
			rep.Arms = append(rep.Arms, Arm{Arm: db.ExperimentArm(*a.Arm), Profile: deref(a.Profile), Units: a.Units.Int64, Searches: a.Searches.Int64, Labelled: a.Labelled.Int64,
				LabelRate: estimate(a.LabelRate, a.LabelRateSe, a.LabelRateLo, a.LabelRateHi),
				MRR:       estimate(a.Mrr, a.MrrSe, a.MrrLo, a.MrrHi),
				MeanRank:  estimate(a.MeanRank, a.MeanRankSe, a.MeanRankLo, a.MeanRankHi)})
		}
		d, err := q.ExperimentComparison(ctx, row.ID)
		if err != nil {
			return err
		}
		rep.Difference = Difference{
			LabelRate: estimate(d.LabelRateDiff, d.LabelRateDiffSe, d.LabelRateDiffLo, d.LabelRateDiffHi),
			MRR:       estimate(d.MrrDiff, d.MrrDiffSe, d.MrrDiffLo, d.MrrDiffHi),
			MeanRank:  estimate(d.MeanRankDiff, d.MeanRankDiffSe, d.MeanRankDiffLo, d.MeanRankDiffHi),
		}
		return nil
	})
	return rep, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
