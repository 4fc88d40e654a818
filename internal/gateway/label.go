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

// startLabel begins the implicit label of a call of tool that starts now, made for caller,
// and returns the function the call ends with: the tool's source ("" when nothing was
// called) and whether the call answered without error. That function waits for the read of
// the database's clock begun here, done while the call runs, and writes the label in the
// background (at most maxLabelWrites at once: past that a label is dropped, not queued).
//
// The call's start is read on the database's clock (DatabaseNow), the clock of the
// searches' created_at, so that a search made after the call began (a use_tool, another
// request of the session) is never labelled. Measured in Go and sent as an age, it was
// placed late by however long the label's statement then waited to start, tens of
// milliseconds on a loaded machine. The call answers only once its start is read: a search
// the agent makes after the answer is then certainly later.
func (s *session) startLabel(c auth.Caller, tool string) func(source string, ok bool) {
	g := s.g
	if g.opts.LabelWindow <= 0 {
		return func(string, bool) {}
	}
	type clock struct {
		at  time.Time
		err error
	}
	started := make(chan clock, 1)
	g.labelWG.Add(1)
	go func() {
		defer g.labelWG.Done()
		ctx, cancel := context.WithTimeout(context.Background(), labelTimeout)
		defer cancel()
		at, err := db.New(g.pool).DatabaseNow(ctx)
		started <- clock{at, err}
	}()
	// the caller the session's searches were logged with (search_log.caller, caller_key_id)
	key, name := pgtype.Int8{Int64: c.KeyID, Valid: c.KeyID != 0}, c.Name
	return func(source string, ok bool) {
		st := <-started // bounded by labelTimeout
		if source == "" {
			return // nothing was called
		}
		if st.err != nil {
			g.log.Error("record implicit label", "session", s.id, "tool", tool, "err", st.err)
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
		go func() {
			defer func() {
				<-g.labels.slots
				g.labelWG.Done()
			}()
			ctx, cancel := context.WithTimeout(context.Background(), labelTimeout)
			defer cancel()
			row, err := db.New(g.pool).RecordCallLabel(ctx, db.RecordCallLabelParams{
				SessionID: s.id, CallerKeyID: key, Caller: name, ToolName: tool, ToolSource: source, Success: ok,
				StartedAt: st.at, LabelWindow: interval(g.opts.LabelWindow),
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
}

func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
