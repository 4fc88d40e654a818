// Package experiments runs A/B experiments between weight profiles (docs/experiments.md):
// while an experiment runs, the searches that name no profile and run the vector branch are
// routed, by a stable hash of their unit (the caller, or one of its sessions), to a candidate
// profile's vectors or to a control profile's, and each search_log row records its arm. The
// arms are compared on the implicit labels (search_labels) with their uncertainty, each
// search key counting as one observation and for a capped number of searches, so that an
// operator activates a profile on evidence that no single key made.
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
	"strings"
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
	// UnitSession assigns by the caller's session (the MCP session of find_tools, or the
	// session_id of POST /search, within the caller's key); a search without one falls back
	// to its caller.
	UnitSession = db.ExperimentBySession
	// UnitKey assigns by the caller: its API key; without a key (open mode, stdio), its name.
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

// UnitValue is toolgate_ab_unit (sql/functions/experiments.sql), the unit value the Search
// statement hashes for a search with this session id, API key id (0: none) and caller name:
// the caller, "key:<key id>" or without a key "caller:<name>", followed by
// "/session:<session id>" when the experiment's unit is the session and the search has one.
// A session is thus always one caller's.
func UnitValue(unit Unit, sessionID string, keyID int64, caller string) string {
	who := "caller:" + caller
	if keyID != 0 {
		who = "key:" + strconv.FormatInt(keyID, 10)
	}
	if unit == UnitSession && sessionID != "" {
		return who + "/session:" + sessionID
	}
	return who
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

// DefaultMaxPerKey is the report's per-key cap by default: a search key counts for at most
// this many searches per arm, its most recent (as a tune's max_per_key, whose default it is).
const DefaultMaxPerKey = 200

// The report warns (Report.Warnings) when one key or one unit made more than DominantShare
// of an arm's searches, and when an arm has fewer than FewClusters independent observations.
const (
	DominantShare = 0.2
	FewClusters   = 30
)

// Estimate is a metric's value with its standard error and 95% confidence interval (normal
// approximation, value ± 1.96·SE). In an arm, the standard error is clustered
// (toolgate_experiment_arms, sql/functions/experiments.sql): the searches of a search key
// are one observation, however many sessions it made (it chooses them: a REST session_id is
// the client's), and the searches of a trusted caller's unit (no key, or an admin key) are
// one. Value is nil without observations, SE and CI95 below two clusters (for the metrics
// over labelled searches, two clusters with a labelled search).
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

// TopUnit is the unit that made the most of an arm's searches.
type TopUnit struct {
	Unit     string  `json:"unit"`
	Searches int64   `json:"searches"`
	Share    float64 `json:"share"` // of the arm's searches
}

// TopKey is the API key that made the most of an arm's searches.
type TopKey struct {
	ID       int64   `json:"id"`
	Name     string  `json:"name"`
	Searches int64   `json:"searches"`
	Share    float64 `json:"share"` // of the arm's searches
}

// Arm is one arm's searches and label metrics (view profile_experiment_arms).
type Arm struct {
	Arm     db.ExperimentArm `json:"arm"`
	Profile string           `json:"profile"`
	// Units: the distinct units (sessions, or callers) whose searches the arm served; Keys:
	// the distinct API keys among their callers.
	Units int64 `json:"units"`
	Keys  int64 `json:"keys"`
	// Clusters: the independent observations the standard errors are computed over, each
	// search key and each unit of a trusted caller. Under about 30 the intervals are
	// approximate, and rather too narrow (docs/experiments.md).
	Clusters int64 `json:"clusters"`
	// Searches: logged in the arm; Counted: those the metrics count, after the per-key cap;
	// Labelled: the counted searches with at least one label.
	Searches int64 `json:"searches"`
	Counted  int64 `json:"counted"`
	Labelled int64 `json:"labelled"`
	// TopUnit and TopKey: the unit and the API key with the most searches (nil: none).
	TopUnit *TopUnit `json:"top_unit"`
	TopKey  *TopKey  `json:"top_key"`
	// LabelRate: the share of searches with at least one label.
	LabelRate Estimate `json:"label_rate"`
	// MRRAll: the mean over all searches of 1/rank of the best-ranked label, 0 when
	// unlabelled (the label rate and the ranking in one number).
	MRRAll Estimate `json:"mrr_all"`
	// MRRLabelled: the same mean over the labelled searches only (as the analytics' MRR).
	MRRLabelled Estimate `json:"mrr_labelled"`
	// MeanRank: the mean over labelled searches of the best-ranked label's rank.
	MeanRank Estimate `json:"mean_rank"`
}

// Difference is candidate − control of each metric, its standard error and 95% interval
// (view profile_experiment_comparison): sqrt(se_candidate² + se_control² − 2·cov), the
// covariance coming from the search keys whose sessions went to both arms.
type Difference struct {
	LabelRate   Estimate `json:"label_rate"`
	MRRAll      Estimate `json:"mrr_all"`
	MRRLabelled Estimate `json:"mrr_labelled"`
	MeanRank    Estimate `json:"mean_rank"`
}

// Report is an experiment with the comparison of its arms.
type Report struct {
	Experiment
	// MaxPerKey: the searches of one search key counted per arm, at most (its most recent).
	MaxPerKey  int        `json:"max_per_key"`
	Arms       []Arm      `json:"arms"` // control, then candidate
	Difference Difference `json:"difference"`
	// Warnings say, in words, what makes the comparison weak: one key or unit making a
	// large share of an arm, too few independent observations.
	Warnings []string `json:"warnings"`
}

// Get returns the experiment with the comparison of its arms as of now, with the default
// per-key cap.
func Get(ctx context.Context, pool *pgxpool.Pool, name string) (Report, error) {
	return GetCapped(ctx, pool, name, DefaultMaxPerKey)
}

// GetCapped returns the experiment with the comparison of its arms as of now, a search key
// counting for at most maxPerKey searches per arm (0: DefaultMaxPerKey).
func GetCapped(ctx context.Context, pool *pgxpool.Pool, name string, maxPerKey int) (Report, error) {
	if maxPerKey == 0 {
		maxPerKey = DefaultMaxPerKey
	}
	if maxPerKey < 1 || maxPerKey > math.MaxInt32 {
		return Report{}, &InvalidError{Field: "max_per_key", Reason: fmt.Sprintf("%d is not a positive number of searches", maxPerKey)}
	}
	rep := Report{MaxPerKey: maxPerKey}
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
		if err := q.SetExperimentMaxPerKey(ctx, int32(maxPerKey)); err != nil {
			return err
		}
		arms, err := q.ExperimentArms(ctx, row.ID)
		if err != nil {
			return err
		}
		for _, a := range arms {
			if a.Arm == nil {
				continue
			}
			arm := Arm{Arm: db.ExperimentArm(*a.Arm), Profile: deref(a.Profile), Units: a.Units.Int64, Keys: a.Keys.Int64,
				Clusters: a.Clusters.Int64, Searches: a.Searches.Int64, Counted: a.Counted.Int64, Labelled: a.Labelled.Int64,
				LabelRate:   estimate(a.LabelRate, a.LabelRateSe, a.LabelRateLo, a.LabelRateHi),
				MRRAll:      estimate(a.MrrAll, a.MrrAllSe, a.MrrAllLo, a.MrrAllHi),
				MRRLabelled: estimate(a.MrrLabelled, a.MrrLabelledSe, a.MrrLabelledLo, a.MrrLabelledHi),
				MeanRank:    estimate(a.MeanRank, a.MeanRankSe, a.MeanRankLo, a.MeanRankHi)}
			if a.TopUnit != nil && arm.Searches > 0 {
				arm.TopUnit = &TopUnit{Unit: *a.TopUnit, Searches: a.TopUnitSearches.Int64,
					Share: float64(a.TopUnitSearches.Int64) / float64(arm.Searches)}
			}
			if a.TopKeyID.Valid && arm.Searches > 0 {
				arm.TopKey = &TopKey{ID: a.TopKeyID.Int64, Name: deref(a.TopKey), Searches: a.TopKeySearches.Int64,
					Share: float64(a.TopKeySearches.Int64) / float64(arm.Searches)}
			}
			rep.Arms = append(rep.Arms, arm)
		}
		d, err := q.ExperimentComparison(ctx, row.ID)
		if err != nil {
			return err
		}
		rep.Difference = Difference{
			LabelRate:   estimate(d.LabelRateDiff, d.LabelRateDiffSe, d.LabelRateDiffLo, d.LabelRateDiffHi),
			MRRAll:      estimate(d.MrrAllDiff, d.MrrAllDiffSe, d.MrrAllDiffLo, d.MrrAllDiffHi),
			MRRLabelled: estimate(d.MrrLabelledDiff, d.MrrLabelledDiffSe, d.MrrLabelledDiffLo, d.MrrLabelledDiffHi),
			MeanRank:    estimate(d.MeanRankDiff, d.MeanRankDiffSe, d.MeanRankDiffLo, d.MeanRankDiffHi),
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	rep.Warnings = warnings(rep)
	return rep, nil
}

// warnings says what makes the report's comparison weak, arm by arm (an empty list when
// nothing does).
func warnings(r Report) []string {
	out := []string{}
	for _, a := range r.Arms {
		if a.Searches == 0 {
			continue
		}
		if k := a.TopKey; k != nil && k.Share > DominantShare {
			out = append(out, fmt.Sprintf("the %s arm: API key %q (id %d) made %.0f%% of its searches (%d of %d); "+
				"the comparison counts a search key as one observation and at most %d of its searches",
				a.Arm, k.Name, k.ID, 100*k.Share, k.Searches, a.Searches, r.MaxPerKey))
		}
		if u := a.TopUnit; u != nil && u.Share > DominantShare && (a.TopKey == nil || u.Unit != "key:"+strconv.FormatInt(a.TopKey.ID, 10)) {
			msg := fmt.Sprintf("the %s arm: unit %q made %.0f%% of its searches (%d of %d)", a.Arm, u.Unit, 100*u.Share, u.Searches, a.Searches)
			if r.Unit == UnitSession && !strings.Contains(u.Unit, "/session:") {
				msg += "; searches without a session (POST /search without session_id) are one unit per caller"
			}
			out = append(out, msg)
		}
		switch {
		case a.Clusters < 2:
			out = append(out, fmt.Sprintf("the %s arm has %d independent observation(s) (a search key, or a unit of a caller without one): "+
				"no standard error or interval", a.Arm, a.Clusters))
		case a.Clusters < FewClusters:
			out = append(out, fmt.Sprintf("the %s arm has %d independent observations, under %d: its intervals are approximate, and rather too narrow",
				a.Arm, a.Clusters, FewClusters))
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
