// Package tune chooses a profile's TDWA weights and fusion weights from a deployment's own
// traffic: from the searches whose results an agent then used (search_labels), it searches
// the weight space over the component kinds and the lexical branch's fusion weight with the
// stored component vectors and the lexical index only (no tool is re-embedded; each
// labelled query is embedded once), scores each weighting by the rank of the used tool in
// the fused ranking on a training split, measures the winner against a baseline profile on
// held-out searches with a bootstrap confidence interval, and creates a new, inactive
// profile with those weights and that evidence (docs/profiles.md#tuning-weights-from-labels).
// The profile_tune job of package jobs runs Run.
package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Defaults and bounds of Options.
const (
	DefaultSinceDays   = 90
	DefaultHoldout     = 0.3
	DefaultMinSearches = 50
	DefaultMaxSearches = 2000
	// MinSearchesFloor is the least MinSearches a caller may ask for, and minSplit the
	// least labelled searches each split needs: below them no interval says anything.
	MinSearchesFloor = 20
	minSplit         = 10
	// maxMaxSearches bounds the searches a tune reads: its memory is about 50 KB per search
	// (each query's pools) and its scan time grows with searches × tools.
	maxMaxSearches = 5000
	// poolPerKind is how many tools closest to a query by each kind's vector join its pool.
	poolPerKind = 50
	// embedBatch is how many query texts one embedding call carries.
	embedBatch = 64
)

// Options is what a tune is asked for; zero fields take the defaults.
type Options struct {
	// Profile is the name of the profile to create; it must not exist.
	Profile string `json:"profile"`
	// Baseline is the profile the tuned weights are compared with; "" means the active one.
	Baseline string `json:"baseline"`
	// SinceDays: only searches of the last SinceDays days count.
	SinceDays int `json:"since_days"`
	// Holdout is the share of the labelled searches held out to measure the gain (split by
	// the query text, so one query is never on both sides).
	Holdout float64 `json:"holdout"`
	// MinSearches: fewer labelled searches than this, and the tune is refused.
	MinSearches int `json:"min_searches"`
	// MaxSearches: the most recent labelled searches used, at most.
	MaxSearches int `json:"max_searches"`
	// MaxPerKey: the most labelled searches of one search key used (its most recent), so
	// that one tenant's volume cannot steer the weights; 0 is a tenth of MaxSearches.
	// Searches without a key or with an admin key are not capped.
	MaxPerKey int `json:"max_per_key"`
	// Seed makes the random starting points and the bootstrap reproducible.
	Seed uint64 `json:"seed"`
}

// InvalidOptionsError says which option is wrong.
type InvalidOptionsError struct{ Reason string }

func (e *InvalidOptionsError) Error() string        { return "invalid tune: " + e.Reason }
func (e *InvalidOptionsError) Is(target error) bool { return target == derrors.Invalid }
func (e *InvalidOptionsError) Code() string         { return "invalid_tune" }

// TooFewLabelsError refuses a tune that would have too few labelled searches to say
// anything.
type TooFewLabelsError struct {
	Searches, Train, HeldOut int
	Need                     int // labelled searches needed in all (each split needs minSplit)
	SinceDays                int
}

func (e *TooFewLabelsError) Error() string {
	return fmt.Sprintf("too few labels to tune: %d labelled searches in the last %d days (%d for training, %d held out); "+
		"need at least %d, and %d on each side", e.Searches, e.SinceDays, e.Train, e.HeldOut, e.Need, minSplit)
}
func (e *TooFewLabelsError) Is(target error) bool { return target == derrors.Conflict }
func (e *TooFewLabelsError) Code() string         { return "too_few_labels" }

// ProfileExistsError refuses a tune whose profile name is taken: a tune never changes an
// existing profile.
type ProfileExistsError struct{ Name string }

func (e *ProfileExistsError) Error() string {
	return fmt.Sprintf("weight profile %q already exists; a tune creates a new profile", e.Name)
}
func (e *ProfileExistsError) Is(target error) bool { return target == derrors.Conflict }
func (e *ProfileExistsError) Code() string         { return "profile_exists" }

// NotFoundError is returned for an unknown tune id.
type NotFoundError struct{ ID int64 }

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no tune %d", e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == derrors.NotFound }

// withDefaults fills zero fields and validates the options.
func (o Options) withDefaults(now time.Time) (Options, error) {
	if o.Profile == "" {
		o.Profile = "tuned-" + now.UTC().Format("20060102-150405")
	}
	if o.SinceDays == 0 {
		o.SinceDays = DefaultSinceDays
	}
	if o.Holdout == 0 {
		o.Holdout = DefaultHoldout
	}
	if o.MinSearches == 0 {
		o.MinSearches = DefaultMinSearches
	}
	if o.MaxSearches == 0 {
		o.MaxSearches = DefaultMaxSearches
	}
	if o.MaxPerKey == 0 {
		o.MaxPerKey = max(o.MaxSearches/10, 1)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	switch {
	case !profiles.ValidName.MatchString(o.Profile):
		return o, &InvalidOptionsError{Reason: fmt.Sprintf("profile name %q must match %s", o.Profile, profiles.ValidName)}
	case o.SinceDays < 1 || o.SinceDays > 3650:
		return o, &InvalidOptionsError{Reason: "since_days must be 1 to 3650"}
	case !(o.Holdout >= 0.1 && o.Holdout <= 0.5):
		return o, &InvalidOptionsError{Reason: "holdout must be 0.1 to 0.5"}
	case o.MinSearches < MinSearchesFloor:
		return o, &InvalidOptionsError{Reason: fmt.Sprintf("min_searches must be at least %d", MinSearchesFloor)}
	case o.MaxSearches < o.MinSearches || o.MaxSearches > maxMaxSearches:
		return o, &InvalidOptionsError{Reason: fmt.Sprintf("max_searches must be min_searches to %d", maxMaxSearches)}
	case o.MaxPerKey < 1 || o.MaxPerKey > o.MaxSearches:
		return o, &InvalidOptionsError{Reason: "max_per_key must be 1 to max_searches"}
	}
	return o, nil
}

// Queue queues the jobs a tune needs (package jobs implements it).
type Queue interface {
	profiles.ReweightQueue
	// TuneTx queues, inside tx, the profile_tune job of tune id.
	TuneTx(ctx context.Context, tx pgx.Tx, id int64) (jobID int64, err error)
}

// Started is what Start did.
type Started struct {
	Tune  View  `json:"tune"`
	JobID int64 `json:"job_id"`
}

// Start checks a tune can run (the options, the profile name free, the baseline known,
// enough labelled searches on each side of the split) and records it with its
// profile_tune job, in one transaction.
func Start(ctx context.Context, pool *pgxpool.Pool, queue Queue, opts Options) (Started, error) {
	opts, err := opts.withDefaults(time.Now())
	if err != nil {
		return Started{}, err
	}
	if opts, err = check(ctx, pool, opts); err != nil {
		return Started{}, err
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		return Started{}, err
	}
	var out Started
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		row, err := db.New(tx).CreateTune(ctx, db.CreateTuneParams{Profile: opts.Profile, Baseline: opts.Baseline, Options: raw})
		if err != nil {
			return err
		}
		if out.JobID, err = queue.TuneTx(ctx, tx, row.ID); err != nil {
			return err
		}
		out.Tune, err = viewOf(row)
		return err
	})
	return out, err
}

// check resolves the baseline and refuses a tune that cannot succeed now.
func check(ctx context.Context, pool *pgxpool.Pool, opts Options) (Options, error) {
	q := db.New(pool)
	if _, err := q.GetProfileByName(ctx, opts.Profile); err == nil {
		return opts, &ProfileExistsError{Name: opts.Profile}
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return opts, err
	}
	base, err := baseline(ctx, q, opts.Baseline, search.DefaultSettings())
	if err != nil {
		return opts, err
	}
	opts.Baseline = base.name
	ls, err := loadLabels(ctx, q, opts, time.Now())
	if err != nil {
		return opts, err
	}
	_, _, err = ls.split(opts)
	return opts, err
}

// labelled is one labelled search: its query and the tools the agent used.
type labelled struct {
	searchID int64
	query    string
	tools    map[int64]bool
	keyID    int64 // the search key that made it, capped; 0 for a trusted caller
}

type labelSet struct {
	searches []labelled
	labels   int
}

func loadLabels(ctx context.Context, q *db.Queries, opts Options, now time.Time) (labelSet, error) {
	rows, err := q.LabelledSearches(ctx, db.LabelledSearchesParams{
		Since: now.Add(-time.Duration(opts.SinceDays) * 24 * time.Hour), MaxSearches: int32(opts.MaxSearches),
		MaxPerKey: int32(opts.MaxPerKey)})
	if err != nil {
		return labelSet{}, err
	}
	var ls labelSet
	for _, r := range rows {
		if n := len(ls.searches); n == 0 || ls.searches[n-1].searchID != r.SearchID {
			ls.searches = append(ls.searches, labelled{searchID: r.SearchID, query: r.Query, tools: map[int64]bool{}, keyID: r.KeyID})
		}
		ls.searches[len(ls.searches)-1].tools[r.ToolID] = true
		ls.labels++
	}
	return ls, nil
}

// perKey is how many search keys made the searches, and the most searches one of them made
// (trusted callers are not counted).
func (ls labelSet) perKey() (keys, most int) {
	n := map[int64]int{}
	for _, s := range ls.searches {
		if s.keyID != 0 {
			n[s.keyID]++
			most = max(most, n[s.keyID])
		}
	}
	return len(n), most
}

// split divides the searches into training and held-out indexes by a hash of the
// normalized query text, so that a query asked many times is on one side only and a
// search stays on its side as labels accumulate.
func (ls labelSet) split(opts Options) (train, heldOut []int, err error) {
	for i, s := range ls.searches {
		h := fnv.New64a()
		h.Write([]byte(strings.Join(strings.Fields(strings.ToLower(s.query)), " ")))
		if float64(h.Sum64()%10000) < opts.Holdout*10000 {
			heldOut = append(heldOut, i)
		} else {
			train = append(train, i)
		}
	}
	if len(ls.searches) < opts.MinSearches || len(train) < minSplit || len(heldOut) < minSplit {
		return nil, nil, &TooFewLabelsError{Searches: len(ls.searches), Train: len(train), HeldOut: len(heldOut),
			Need: opts.MinSearches, SinceDays: opts.SinceDays}
	}
	return train, heldOut, nil
}

// baseProfile is the baseline: its name, the definition its current vectors were made with
// (what its searches see), or its definition when it has no vectors yet, and the fusion
// weights its searches use (its own, else the settings').
type baseProfile struct {
	name    string
	profile tdwa.Profile
	fusion  profiles.Fusion
}

func baseline(ctx context.Context, q *db.Queries, name string, st search.Settings) (baseProfile, error) {
	var p db.WeightProfile
	var err error
	if name == "" {
		p, err = q.GetActiveProfile(ctx)
	} else {
		p, err = q.GetProfileByName(ctx, name)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return baseProfile{}, &profiles.NotFoundError{Name: name}
	}
	if err != nil {
		return baseProfile{}, err
	}
	strategy, weights := p.Strategy, p.Weights
	if p.CurrentSet.Valid {
		set, err := q.GetVectorSet(ctx, p.CurrentSet.Int64)
		if err != nil {
			return baseProfile{}, err
		}
		strategy, weights = set.Strategy, set.Weights
	}
	prof, err := tdwa.ParseProfile(strategy, weights)
	fz := profiles.Fusion{WeightLexical: st.WeightLexical, WeightVector: st.WeightVector}
	if p.WeightLexical.Valid && p.WeightVector.Valid {
		fz = profiles.Fusion{WeightLexical: p.WeightLexical.Float64, WeightVector: p.WeightVector.Float64}
	}
	return baseProfile{name: p.Name, profile: prof, fusion: fz}, err
}

// Result is what a tune found (profile_tunes.result).
type Result struct {
	// Weights of the created profile (summing to 1 over the kinds the catalog has), and its
	// fusion weights.
	Weights  map[string]float64 `json:"weights"`
	Fusion   profiles.Fusion    `json:"fusion"`
	Baseline struct {
		Name     string             `json:"name"`
		Strategy string             `json:"strategy"`
		Weights  map[string]float64 `json:"weights,omitempty"`
		Fusion   profiles.Fusion    `json:"fusion"`
	} `json:"baseline"`
	Labels struct {
		Searches int `json:"searches"` // labelled searches used
		Labels   int `json:"labels"`   // their labels (a search may have several)
		Train    int `json:"train"`
		HeldOut  int `json:"held_out"`
		// Unranked: labelled searches left out because no labelled tool has a vector.
		Unranked int `json:"unranked"`
		// The per-key cap: searches of one search key used at most (max_per_key), how many
		// search keys made the searches used, and the most one of them made.
		MaxPerKey  int `json:"max_per_key"`
		Keys       int `json:"keys"`
		MostPerKey int `json:"most_per_key"`
	} `json:"labels"`
	Train   Comparison `json:"train"`
	HeldOut Comparison `json:"held_out"`
	Gain    Gain       `json:"gain"`
	Search  struct {
		Weightings int `json:"weightings"` // weightings scored
		// Shrink is the share of the way from the baseline's weights to the searched ones
		// that cross-validation kept (0: the labels found nothing better than the baseline).
		Shrink float64 `json:"shrink"`
		// Fusion is the method and candidates per branch of the fused ranking scored.
		Fusion          search.Fusion `json:"fusion"`
		Candidates      int           `json:"candidates"`
		PoolPerKind     int           `json:"pool_per_kind"`    // tools per kind in each query's pool
		QueryEmbeddings int           `json:"query_embeddings"` // query texts embedded (tools: none)
		Tools           int           `json:"tools"`            // tools with embedded components
	} `json:"search"`
	// Created says whether the profile was created: not when the weights are the
	// baseline's (Search.Shrink 0).
	Created bool `json:"created"`
	// The re-weight that builds the new profile's vectors, when it was created.
	Reweight *profiles.ReweightStart `json:"reweight,omitempty"`
}

// Comparison is the baseline's and the tuned weights' metrics on one split.
type Comparison struct {
	Baseline Metrics `json:"baseline"`
	Tuned    Metrics `json:"tuned"`
}

// RunOptions tunes Run.
type RunOptions struct {
	// Search are the settings of the search the tune scores (fusion method and weights,
	// candidates per branch); the zero value is search.DefaultSettings().
	Search search.Settings
	Logger *slog.Logger
	// OnProgress is called with each phase's progress as it is recorded.
	OnProgress func(phase string, done, total int)
}

// Run works tune id: loads its labels, embeds their queries, scans the stored component
// vectors, searches the weights, measures them on the held-out searches, and in one
// transaction creates the profile (inactive), records the result and queues the profile's
// re-weight. A tune that already succeeded is done. Until that last transaction a step
// writes nothing but the tune's progress, so a run interrupted anywhere is simply run again.
func Run(ctx context.Context, pool *pgxpool.Pool, embedder embed.Embedder, queue profiles.ReweightQueue, id int64, ro RunOptions) (View, error) {
	log := ro.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := db.New(pool)
	row, err := q.GetTune(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return View{}, &NotFoundError{ID: id}
	}
	if err != nil {
		return View{}, err
	}
	if row.State == db.TuneSucceeded {
		return viewOf(row)
	}
	if embedder == nil {
		return View{}, errors.New("tune: no embedder to embed the labelled queries")
	}
	var opts Options
	if err := json.Unmarshal(row.Options, &opts); err != nil {
		return View{}, fmt.Errorf("tune %d options: %w", id, err)
	}
	if err := q.TuneRunning(ctx, id); err != nil {
		return View{}, err
	}
	progress := func(phase string, done, total int) error {
		if ro.OnProgress != nil {
			ro.OnProgress(phase, done, total)
		}
		return q.TuneProgress(ctx, db.TuneProgressParams{ID: id, Phase: &phase, Done: int32(done), Total: int32(total)})
	}
	start := time.Now()
	st := ro.Search
	if st.Candidates == 0 {
		st = search.DefaultSettings()
	}

	base, err := baseline(ctx, q, opts.Baseline, st)
	if err != nil {
		return View{}, err
	}
	if err := progress("labels", 0, 0); err != nil {
		return View{}, err
	}
	ls, err := loadLabels(ctx, q, opts, row.CreatedAt)
	if err != nil {
		return View{}, err
	}
	train, heldOut, err := ls.split(opts)
	if err != nil {
		return View{}, err
	}
	fz := fusionOf(st)
	m, ntexts, err := buildModel(ctx, pool, embedder, ls, fz, progress)
	if err != nil {
		return View{}, err
	}
	// A search none of whose labelled tools has a vector ranks nothing: leave it out.
	train, unrankedTrain := m.ranked(train)
	heldOut, unrankedHeld := m.ranked(heldOut)
	if len(train) < minSplit || len(heldOut) < minSplit {
		return View{}, &TooFewLabelsError{Searches: len(train) + len(heldOut), Train: len(train), HeldOut: len(heldOut),
			Need: opts.MinSearches, SinceDays: opts.SinceDays}
	}

	if err := progress("search", 0, 0); err != nil {
		return View{}, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x746f6f6c67617465))
	baseW := weightsOf(base.profile, base.fusion.WeightLexical, base.fusion.WeightVector)
	tuned, shrink, evals, err := searchWeights(ctx, q, m, train, baseW, rng, progress)
	if err != nil {
		return View{}, err
	}

	if err := progress("evaluate", 0, 0); err != nil {
		return View{}, err
	}
	res := resultOf(base, tuned, ls, opts.MaxPerKey)
	res.Labels.Train, res.Labels.HeldOut, res.Labels.Unranked = len(train), len(heldOut), unrankedTrain+unrankedHeld
	if res.Train, res.HeldOut, res.Gain, err = m.compare(baseW, tuned, train, heldOut, rng); err != nil {
		return View{}, err
	}
	res.Search.Shrink = shrink
	res.Search.Fusion, res.Search.Candidates = fz.method, fz.cand
	res.Search.Weightings, res.Search.PoolPerKind, res.Search.QueryEmbeddings, res.Search.Tools = evals, poolPerKind, ntexts, len(m.tools)

	v, err := finish(ctx, pool, queue, id, opts.Profile, &res)
	if err != nil {
		return View{}, err
	}
	log.Info("tune done", "tune", id, "profile", opts.Profile, "searches", len(ls.searches), "weightings", evals,
		"weight_lexical", res.Fusion.WeightLexical, "held_out_gain", res.Gain.Mean, "verdict", res.Gain.Verdict, "duration_ms", time.Since(start).Milliseconds())
	return v, nil
}

// resultOf is the part of a tune's result known before the evaluation: the tuned and the
// baseline weights, and the labels the tune used.
func resultOf(base baseProfile, tuned weighting, ls labelSet, maxPerKey int) Result {
	res := Result{Weights: tuned.byKind(), Fusion: profiles.Fusion{WeightLexical: tuned.wl, WeightVector: tuned.wv}}
	res.Baseline.Name, res.Baseline.Strategy, res.Baseline.Weights = base.name, base.profile.Strategy, base.profile.Weights
	res.Baseline.Fusion = base.fusion
	res.Labels.Searches, res.Labels.Labels = len(ls.searches), ls.labels
	res.Labels.MaxPerKey = maxPerKey
	res.Labels.Keys, res.Labels.MostPerKey = ls.perKey()
	return res
}

// buildModel makes the model the weight search scores, for the searches of ls: their
// queries embedded, their lexical candidates and meaning scores, and each query's pool of
// tools scanned from the stored component vectors. It also returns how many query texts
// were embedded.
func buildModel(ctx context.Context, pool *pgxpool.Pool, embedder embed.Embedder, ls labelSet, fz fusionConfig,
	progress func(phase string, done, total int) error) (*model, int, error) {
	queryVecs, ntexts, err := embedQueries(ctx, pool, embedder, ls, progress)
	if err != nil {
		return nil, 0, err
	}
	texts, textOf := distinctQueries(ls)
	lexical, err := lexicalScores(ctx, pool, texts, func(done, total int) error { return progress("lexical", done, total) })
	if err != nil {
		return nil, 0, err
	}
	positives := make([]map[int64]bool, len(ls.searches))
	forced := make([]map[int64]bool, len(ls.searches)) // the labelled tools and the lexical candidates
	for i, s := range ls.searches {
		positives[i] = s.tools
		forced[i] = maps.Clone(s.tools)
		for _, l := range lexical[textOf[i]][:min(len(lexical[textOf[i]]), fz.cand)] {
			forced[i][l.id] = true
		}
	}

	var perr error
	m, err := scan(ctx, pool, queryVecs, positives, forced, poolPerKind, func(done, total int) {
		if perr == nil {
			perr = progress("scan", done, total)
		}
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return nil, 0, err
	}
	m.fusion, m.fuser = fz, &fuser{ctx: ctx, pool: pool}
	queryTexts := make([]string, len(m.queries))
	for i := range m.queries {
		m.queries[i].lexical = lexical[textOf[i]]
		queryTexts[i] = texts[textOf[i]]
	}
	if err := m.meaningScores(ctx, pool, queryTexts); err != nil {
		return nil, 0, err
	}
	m.prepare()
	return m, ntexts, nil
}

// searchWeights searches the weighting that ranks the train searches best, from the
// baseline and every stored TDWA profile, and returns it shrunk towards the baseline by
// cross-validation (the baseline itself when the labels found nothing better), the shrink,
// and how many weightings were scored.
func searchWeights(ctx context.Context, q *db.Queries, m *model, train []int, baseW weighting, rng *rand.Rand,
	progress func(phase string, done, total int) error) (tuned weighting, shrink float64, evals int, err error) {
	starts, err := startsOf(ctx, q, baseW)
	if err != nil {
		return weighting{}, 0, 0, err
	}
	// The search's progress is the weightings scored of fitBudget, recorded at most once a
	// second (each record is a write); the last record is the phase's end.
	var lastRecord time.Time
	var perr error
	best, shrink, evals := m.fit(train, baseW, starts, rng, func(done, budget int) {
		if perr == nil && time.Since(lastRecord) >= time.Second {
			lastRecord = time.Now()
			perr = progress("search", done, budget)
		}
	})
	if perr != nil {
		return weighting{}, 0, 0, perr
	}
	if m.fuser.err != nil {
		return weighting{}, 0, 0, m.fuser.err
	}
	tuned = baseW // shrink 0: the labels found nothing better
	if shrink > 0 {
		tuned = weighting{w: rounded(best.w), wl: clampLexical(best.wl, best.wv), wv: best.wv}
	}
	return tuned, shrink, evals, nil
}

// compare measures the baseline's and the tuned weights on the train and held-out
// searches, and the tuned weights' gain on the held-out ones.
func (m *model) compare(baseW, tuned weighting, train, heldOut []int, rng *rand.Rand) (trainCmp, heldOutCmp Comparison, gain Gain, err error) {
	trainCmp = Comparison{Baseline: metricsOf(m.reciprocalRanks(baseW, train)), Tuned: metricsOf(m.reciprocalRanks(tuned, train))}
	baseHeld, tunedHeld := m.reciprocalRanks(baseW, heldOut), m.reciprocalRanks(tuned, heldOut)
	heldOutCmp = Comparison{Baseline: metricsOf(baseHeld), Tuned: metricsOf(tunedHeld)}
	if m.fuser.err != nil {
		return Comparison{}, Comparison{}, Gain{}, m.fuser.err
	}
	return trainCmp, heldOutCmp, pairedGain(tunedHeld, baseHeld, rng), nil
}

// byKind is the weighting as a profile's weights: the positive weights by kind name.
func (w weighting) byKind() map[string]float64 {
	out := map[string]float64{}
	for k, v := range w.w {
		if v > 0 {
			out[tdwa.Kinds[k]] = v
		}
	}
	return out
}

// embedQueries embeds each distinct query text of ls once, in the space of the stored
// vectors, and returns every search's query vector and how many texts were embedded.
func embedQueries(ctx context.Context, pool *pgxpool.Pool, embedder embed.Embedder, ls labelSet,
	progress func(phase string, done, total int) error) ([][]float32, int, error) {
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return embed.CheckSpace(ctx, tx, embedder) }); err != nil {
		return nil, 0, err
	}
	texts, textOf := distinctQueries(ls)
	vecs := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += embedBatch {
		if err := progress("embed", i, len(texts)); err != nil {
			return nil, 0, err
		}
		vs, err := embedder.Embed(ctx, texts[i:min(i+embedBatch, len(texts))])
		if err != nil {
			return nil, 0, fmt.Errorf("embed the labelled queries: %w", err)
		}
		vecs = append(vecs, vs...)
	}
	queryVecs := make([][]float32, len(ls.searches))
	for i := range ls.searches {
		queryVecs[i] = vecs[textOf[i]]
	}
	return queryVecs, len(texts), nil
}

// startsOf is where the weight search starts: the baseline, then every stored TDWA profile.
func startsOf(ctx context.Context, q *db.Queries, baseW weighting) ([]weighting, error) {
	starts := []weighting{baseW}
	stored, err := q.TdwaProfileWeights(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range stored {
		if p, err := tdwa.ParseProfile(tdwa.StrategyTDWA, s.Weights); err == nil {
			starts = append(starts, weightsOf(p, baseW.wl, baseW.wv))
		}
	}
	return starts, nil
}

// ranked keeps the searches of split that have a labelled tool in their pool.
func (m *model) ranked(split []int) (kept []int, dropped int) {
	for _, i := range split {
		ok := false
		for _, c := range m.queries[i].pool {
			if m.queries[i].positives[m.tools[c.tool].id] {
				ok = true
				break
			}
		}
		if ok {
			kept = append(kept, i)
		} else {
			dropped++
		}
	}
	return kept, dropped
}

func distinctQueries(ls labelSet) (texts []string, textOf []int) {
	index := map[string]int{}
	textOf = make([]int, len(ls.searches))
	for i, s := range ls.searches {
		j, ok := index[s.query]
		if !ok {
			j = len(texts)
			index[s.query] = j
			texts = append(texts, s.query)
		}
		textOf[i] = j
	}
	return texts, textOf
}

// finish creates the tuned profile, records the result and queues the profile's re-weight,
// in one transaction. When the weights are the baseline's (cross-validation kept none of
// the searched change), no profile is created: it would be a copy of the baseline.
func finish(ctx context.Context, pool *pgxpool.Pool, queue profiles.ReweightQueue, id int64, name string, res *Result) (View, error) {
	var out View
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.LockTune(ctx, id)
		if err != nil {
			return err
		}
		if row.State == db.TuneSucceeded {
			out, err = viewOf(row)
			return err
		}
		if res.Search.Shrink > 0 {
			if err := createProfile(ctx, tx, queue, id, name, res); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if err := q.TuneSucceeded(ctx, db.TuneSucceededParams{ID: id, Result: raw}); err != nil {
			return err
		}
		row, err = q.GetTune(ctx, id)
		if err != nil {
			return err
		}
		out, err = viewOf(row)
		return err
	})
	return out, err
}

// createProfile creates the tuned profile and queues its re-weight inside tx.
func createProfile(ctx context.Context, tx pgx.Tx, queue profiles.ReweightQueue, id int64, name string, res *Result) error {
	q := db.New(tx)
	weights, err := json.Marshal(res.Weights)
	if err != nil {
		return err
	}
	_, err = q.InsertTunedProfile(ctx, db.InsertTunedProfileParams{Name: name, Weights: weights, TuneID: pgtype.Int8{Int64: id, Valid: true},
		WeightLexical: res.Fusion.WeightLexical, WeightVector: res.Fusion.WeightVector})
	if errors.Is(err, pgx.ErrNoRows) {
		return &ProfileExistsError{Name: name}
	}
	if err != nil {
		return err
	}
	set, err := profiles.BeginReweight(ctx, tx, name)
	if err != nil {
		return err
	}
	jobID, setID, _, err := queue.ReweightTx(ctx, tx, name, set.ID)
	if err != nil {
		return err
	}
	res.Created = true
	res.Reweight = &profiles.ReweightStart{JobID: jobID, SetID: setID}
	return nil
}

// Fail marks the tune failed with err (a tune that succeeded stays so).
func Fail(ctx context.Context, pool *pgxpool.Pool, id int64, cause error) error {
	msg := cause.Error()
	return db.New(pool).TuneFailed(ctx, db.TuneFailedParams{ID: id, Error: &msg})
}

// Permanent says whether err fails the tune for good: running it again gives the same.
func Permanent(err error) bool {
	return errors.Is(err, derrors.Invalid) || errors.Is(err, derrors.Conflict) || errors.Is(err, derrors.NotFound)
}

// View is a tune as operators see it.
type View struct {
	ID         int64        `json:"id"`
	Profile    string       `json:"profile"`
	Baseline   string       `json:"baseline"`
	State      db.TuneState `json:"state"`
	Phase      *string      `json:"phase,omitempty"`
	Done       int          `json:"done"`
	Total      int          `json:"total"`
	Options    Options      `json:"options"`
	Result     *Result      `json:"result"`
	Error      *string      `json:"error,omitempty"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at,omitempty"`
}

func viewOf(r db.ProfileTune) (View, error) {
	v := View{ID: r.ID, Profile: r.Profile, Baseline: r.Baseline, State: r.State, Phase: r.Phase, Done: int(r.Done),
		Total: int(r.Total), Error: r.Error, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
	if err := json.Unmarshal(r.Options, &v.Options); err != nil {
		return v, fmt.Errorf("tune %d options: %w", r.ID, err)
	}
	if len(r.Result) > 0 {
		v.Result = &Result{}
		if err := json.Unmarshal(r.Result, v.Result); err != nil {
			return v, fmt.Errorf("tune %d result: %w", r.ID, err)
		}
	}
	return v, nil
}

// Get returns tune id.
func Get(ctx context.Context, pool *pgxpool.Pool, id int64) (View, error) {
	r, err := db.New(pool).GetTune(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return View{}, &NotFoundError{ID: id}
	}
	if err != nil {
		return View{}, err
	}
	return viewOf(r)
}

// Listed is how many tunes List returns.
const Listed = 50

// List returns the Listed most recent tunes, newest first.
func List(ctx context.Context, pool *pgxpool.Pool) ([]View, error) {
	rows, err := db.New(pool).ListTunes(ctx, Listed)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rows))
	for _, r := range rows {
		v, err := viewOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
