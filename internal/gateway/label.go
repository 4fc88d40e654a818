package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
)

// Implicit labels: a call of a tool that a find_tools of the same session
// returned shortly before labels that search with the tool, its rank and the delay
// (search_labels, migration 0014). Labels are written after the proxied call, in the
// background, so that they never delay or fail a call: at most maxLabelWrites writes are in
// flight, each bounded by labelTimeout, and a label that cannot be written is logged and
// lost. Which search a call labels is decided in the database (RecordCallLabel), so a
// session served by several instances labels the searches any of them made.

const (
	// DefaultLabelWindow is how long after a find_tools a call still labels it.
	DefaultLabelWindow = 15 * time.Minute
	maxLabelWrites     = 64
	labelTimeout       = 5 * time.Second
)

// labeler writes the labels of one gateway.
type labeler struct {
	slots chan struct{}
}

// label records that caller called tool (of source) in the session after a search, the
// call having started at start; ok is whether the call answered without error. It returns
// at once.
func (s *session) label(c auth.Caller, tool, source string, start time.Time, ok bool) {
	g := s.g
	if g.opts.LabelWindow <= 0 {
		return
	}
	select {
	case g.labels.slots <- struct{}{}:
	default:
		// The database is slower than the calls: losing a label beats queueing without bound.
		g.log.Warn("implicit label dropped: too many label writes in flight", "session", s.id, "tool", tool)
		return
	}
	g.labelWG.Add(1)
	// the caller the session's searches were logged with (search_log.caller, caller_key_id)
	key, name := pgtype.Int8{Int64: c.KeyID, Valid: c.KeyID != 0}, c.Name
	go func() {
		defer func() {
			<-g.labels.slots
			g.labelWG.Done()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), labelTimeout)
		defer cancel()
		// The call's start is placed on the database's clock, as now() - since, like the
		// searches' created_at. since is measured once a connection is held, right before the
		// statement starts: measured before waiting for a connection, the start would be
		// placed late by that wait, and a search made after the call could be labelled.
		conn, err := g.pool.Acquire(ctx)
		if err != nil {
			g.log.Error("record implicit label", "session", s.id, "tool", tool, "err", err)
			return
		}
		defer conn.Release()
		row, err := db.New(conn).RecordCallLabel(ctx, db.RecordCallLabelParams{
			SessionID: s.id, CallerKeyID: key, Caller: name, ToolName: tool, ToolSource: source, Success: ok,
			Since:       interval(time.Since(start)),
			LabelWindow: interval(g.opts.LabelWindow),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return // no search of the session returned the tool within the window
		}
		if err != nil {
			g.log.Error("record implicit label", "session", s.id, "tool", tool, "err", err)
			return
		}
		g.log.Debug("implicit label", "session", s.id, "tool", tool, "new", row.NewLabel)
		if row.NewLabel {
			g.opts.Metrics.ObserveLabel(string(db.LabelCall), source, row.Profile)
		}
	}()
}

func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
