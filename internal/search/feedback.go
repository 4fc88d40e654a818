package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
)

// Feedback is one tool an agent called after a search.
type Feedback struct {
	Name    string `json:"name"`
	Success *bool  `json:"success"`
}

// RecordFeedback stores which tools caller c called after its search id. Only the caller
// that made a search may report on it — the same API key (search_log.caller_key_id),
// or for a search made without a key the same caller name — and only about tools that
// search returned. Another caller's search is not found, so search ids cannot be probed.
// It returns how many tools it recorded: one per tool, however many times and by whichever
// of its names (catalog or function name) the report names it.
func (s *Service) RecordFeedback(ctx context.Context, c auth.Caller, id int64, tools []Feedback) (int, error) {
	if len(tools) == 0 || len(tools) > MaxK {
		return 0, &InvalidRequestError{Field: "tools", Reason: fmt.Sprintf("want 1 to %d tools", MaxK)}
	}
	names := make([]string, len(tools))
	succ := make([]bool, len(tools))
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d].name", i)
		if err := checkText(field, t.Name); err != nil {
			return 0, err
		}
		names[i] = strings.TrimSpace(t.Name)
		if names[i] == "" {
			return 0, &InvalidRequestError{Field: field, Reason: "must not be empty"}
		}
		if utf8.RuneCountInString(names[i]) > maxName {
			return 0, &InvalidRequestError{Field: field, Reason: fmt.Sprintf("at most %d characters", maxName)}
		}
		if t.Success == nil {
			return 0, &InvalidRequestError{Field: fmt.Sprintf("tools[%d].success", i), Reason: "must be true or false"}
		}
		succ[i] = *t.Success
	}
	var profile string
	var distinct int
	var recorded []db.InsertSearchFeedbackRow
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.SearchLogForFeedback(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return &NotFoundError{ID: id}
		}
		if err != nil {
			return err
		}
		if !madeBy(row, c) {
			return &NotFoundError{ID: id}
		}
		for i, n := range names {
			name, ok := resultNamed(row.Names, n)
			if !ok {
				return &InvalidRequestError{Field: fmt.Sprintf("tools[%d].name", i),
					Reason: fmt.Sprintf("%q is not among the results of search %d", n, id)}
			}
			names[i] = name
		}
		names, succ := dedupeFeedback(names, succ)
		distinct = len(names)
		profile = row.Profile
		recorded, err = q.InsertSearchFeedback(ctx, db.InsertSearchFeedbackParams{SearchID: id, Names: names, Successes: succ})
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, r := range recorded {
		if r.NewLabel {
			s.metrics.ObserveLabel(string(db.LabelFeedback), r.ToolSource, profile)
		}
	}
	return distinct, nil
}

// resultNamed finds the result a feedback names: by its namespaced name, or by the
// function name the openai, anthropic and mcp formats gave it (catalog.FunctionName).
func resultNamed(results []string, name string) (string, bool) {
	if slices.Contains(results, name) {
		return name, true
	}
	for _, r := range results {
		if catalog.FunctionName(r) == name {
			return r, true
		}
	}
	return "", false
}

// dedupeFeedback keeps one entry per tool name, the last one given, at the place of its
// first: a report naming a tool twice is one report of it, as a later report replaces an
// earlier one (the label upsert could not touch the same row twice in one statement).
func dedupeFeedback(names []string, succ []bool) ([]string, []bool) {
	at := make(map[string]int, len(names))
	outN, outS := names[:0:0], succ[:0:0]
	for i, n := range names {
		if j, ok := at[n]; ok {
			outS[j] = succ[i]
			continue
		}
		at[n] = len(outN)
		outN, outS = append(outN, n), append(outS, succ[i])
	}
	return outN, outS
}

// internalCaller is the caller name logged for searches made on nobody's behalf.
const internalCaller = "internal"

// Internal is the caller of searches made on nobody's behalf (evaluation, benchmarks, the
// CLI against its own database): every source, no key, no default plan.
func Internal() auth.Caller { return auth.Caller{Name: internalCaller} }

// madeBy reports whether the search of row was made by c: the same key, or, for a search
// without a key, the same caller name.
func madeBy(row db.SearchLogForFeedbackRow, c auth.Caller) bool {
	if row.CallerKeyID.Valid {
		return c.KeyID == row.CallerKeyID.Int64
	}
	if c.KeyID != 0 {
		return false
	}
	return row.Caller != nil && *row.Caller == cmp.Or(c.Name, internalCaller)
}
