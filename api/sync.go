package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/sources"
)

// registerSync adds the routes of MCP sources: settings, sync now, definition history and
// review decisions.
func (s *Server) registerSync(g *echo.Group) {
	g.PATCH("/sources/:name", s.patchSource)
	g.POST("/sources/:name/sync", s.syncSource)
	g.GET("/tools/:name/history", s.toolHistory)
	g.POST("/tools/:name/approve", s.approveTool)
	g.POST("/tools/:name/reject", s.rejectTool)
}

// Bounds of a source's sync interval. The lower bound is also a CHECK in the schema.
const (
	minSyncInterval     = 10 * time.Second
	maxSyncInterval     = 30 * 24 * time.Hour
	defaultSyncInterval = time.Hour
)

// parseInterval reads a sync interval: a Go duration ("10m"), or "off" for on-demand only.
func parseInterval(s string) (pgtype.Interval, error) {
	if s == "off" {
		return pgtype.Interval{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < minSyncInterval || d > maxSyncInterval {
		return pgtype.Interval{}, badRequest(`interval %q: want a duration from 10s to 720h (e.g. "10m"), or "off"`, s)
	}
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}, nil
}

func formatInterval(iv pgtype.Interval) string {
	if !iv.Valid {
		return "off"
	}
	d := time.Duration(iv.Microseconds)*time.Microsecond + time.Duration(iv.Days)*24*time.Hour
	return d.String()
}

// mcpSourceFields are the settings of an MCP source in a create request.
type mcpSourceFields struct {
	Command    string            `json:"command"`
	Args       []string          `json:"args"`
	Env        map[string]string `json:"env"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	Interval   *string           `json:"interval"`
	ReviewMode bool              `json:"review_mode"`
}

// createMCPSource creates an MCP source and queues its first sync in the same transaction.
func (s *Server) createMCPSource(c echo.Context, name string, kind db.SourceKind, f mcpSourceFields) error {
	cfg := mcpclient.Config{Command: f.Command, Args: f.Args, Env: f.Env, URL: f.URL, Headers: f.Headers}
	if err := s.checkConfig(kind, cfg); err != nil {
		return err
	}
	interval := pgtype.Interval{Microseconds: defaultSyncInterval.Microseconds(), Valid: true}
	if f.Interval != nil {
		var err error
		if interval, err = parseInterval(*f.Interval); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var (
		src   db.Source
		jobID int64
	)
	err = pgx.BeginFunc(ctx, s.deps.Pool, func(tx pgx.Tx) error {
		var err error
		src, err = db.New(tx).CreateSource(ctx, db.CreateSourceParams{
			Name: name, Kind: kind, Config: raw, SyncInterval: interval, ReviewMode: f.ReviewMode,
		})
		if err != nil {
			return err
		}
		jobID, err = s.queue.SyncTx(ctx, tx, src.ID)
		return err
	})
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, src.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"source": v, "sync_job_id": jobID})
}

// patchSourceRequest changes an MCP source; absent fields stay as they are.
type patchSourceRequest struct {
	Interval   *string            `json:"interval"`
	ReviewMode *bool              `json:"review_mode"`
	Command    *string            `json:"command"`
	Args       *[]string          `json:"args"`
	Env        *map[string]string `json:"env"`
	URL        *string            `json:"url"`
	Headers    *map[string]string `json:"headers"`
}

func (s *Server) patchSource(c echo.Context) error {
	var req patchSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	var src db.Source
	err := pgx.BeginFunc(ctx, s.deps.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := mcpSource(ctx, q, c.Param("name"))
		if err != nil {
			return err
		}
		cfg, err := mcpclient.ParseConfig(old.Config)
		if err != nil {
			return err
		}
		before := cfg // set replaces whole fields, so a shallow copy keeps the old ones
		set(&cfg.Command, req.Command)
		set(&cfg.Args, req.Args)
		set(&cfg.Env, req.Env)
		set(&cfg.URL, req.URL)
		set(&cfg.Headers, req.Headers)
		changed := !reflect.DeepEqual(before, cfg)
		if changed {
			// An unchanged config is not checked again: a source stored before the
			// allowlist changed may still get a new interval, and its syncs are refused.
			if err := s.checkConfig(old.Kind, cfg); err != nil {
				return err
			}
		}
		interval, review := old.SyncInterval, old.ReviewMode
		if req.Interval != nil {
			if interval, err = parseInterval(*req.Interval); err != nil {
				return err
			}
		}
		set(&review, req.ReviewMode)
		raw, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		src, err = q.UpdateSourceSettings(ctx, db.UpdateSourceSettingsParams{ID: old.ID, Config: raw, SyncInterval: interval, ReviewMode: review})
		if errors.Is(err, pgx.ErrNoRows) { // deleted since mcpSource read it
			return notFound("source %q not found", c.Param("name"))
		}
		if err != nil {
			return err
		}
		// a new server: sync it now (compared as values: the stored jsonb text is not
		// byte-for-byte what json.Marshal writes)
		if changed {
			_, err = s.queue.SyncTx(ctx, tx, src.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, src.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// checkConfig validates an MCP source's config and, for mcp_stdio, checks its command
// against the operator's allowlist (403 command_not_allowed).
func (s *Server) checkConfig(kind db.SourceKind, cfg mcpclient.Config) error {
	if err := cfg.Validate(kind); err != nil {
		return err
	}
	if kind == mcpclient.KindStdio {
		return s.deps.Commands.Check(cfg)
	}
	return nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// mcpSource reads an MCP source by name: 404 when missing, 409 for a catalog source.
func mcpSource(ctx context.Context, q *db.Queries, name string) (db.Source, error) {
	src, err := q.GetSourceByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return src, notFound("source %q not found", name)
	}
	if err != nil {
		return src, err
	}
	if !src.Kind.IsMCP() {
		return src, &sources.NotMCPSourceError{Source: src.Name, Kind: src.Kind}
	}
	return src, nil
}

// syncSource queues a sync of the source now: 202 with the job id. When a sync of the
// source is already waiting or running, that job's id is returned with "duplicate": true.
func (s *Server) syncSource(c echo.Context) error {
	ctx := c.Request().Context()
	src, err := mcpSource(ctx, db.New(s.deps.Pool), c.Param("name"))
	if err != nil {
		return err
	}
	id, dup, err := s.queue.Sync(ctx, src.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"job_id": id, "duplicate": dup})
}

// revisionView is one entry of a tool's definition history.
type revisionView struct {
	ID            int64             `json:"id"`
	Action        string            `json:"action"`
	Status        db.RevisionStatus `json:"status"`
	OldHash       *string           `json:"old_hash"`
	NewHash       *string           `json:"new_hash"`
	ChangedFields []string          `json:"changed_fields"`
	Definition    json.RawMessage   `json:"definition,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	DecidedAt     *time.Time        `json:"decided_at"`
}

// toolHistory lists a tool's definition changes, newest first (?limit=, default 100, at
// most 500). History outlives the tool: a deleted tool's history is still shown.
func (s *Server) toolHistory(c echo.Context) error {
	limit := 100
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return badRequest("limit %q: want 1-500", l)
		}
		limit = n
	}
	name := c.Param("name")
	revs, err := db.New(s.deps.Pool).ToolHistory(c.Request().Context(), db.ToolHistoryParams{ToolName: name, Limit: int32(limit)})
	if err != nil {
		return err
	}
	if len(revs) == 0 {
		return notFound("tool %q has no history", name)
	}
	out := make([]revisionView, len(revs))
	for i, r := range revs {
		out[i] = revisionView{ID: r.ID, Action: r.Action, Status: r.Status, OldHash: r.OldHash, NewHash: r.NewHash,
			ChangedFields: r.ChangedFields, Definition: r.Definition, CreatedAt: r.CreatedAt, DecidedAt: r.DecidedAt}
	}
	return c.JSON(http.StatusOK, map[string]any{"tool": name, "revisions": out})
}

// toolReviewView is a tool's state after a review decision.
type toolReviewView struct {
	Name        string         `json:"name"`
	ReviewState db.ReviewState `json:"review_state"`
	ContentHash string         `json:"content_hash"`
	Description string         `json:"description"`
}

func (s *Server) approveTool(c echo.Context) error {
	t, err := sources.Approve(c.Request().Context(), s.deps.Pool, s.queue, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toolReviewView{Name: t.Name, ReviewState: t.ReviewState, ContentHash: t.ContentHash, Description: t.Description})
}

func (s *Server) rejectTool(c echo.Context) error {
	t, err := sources.Reject(c.Request().Context(), s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toolReviewView{Name: t.Name, ReviewState: t.ReviewState, ContentHash: t.ContentHash, Description: t.Description})
}
