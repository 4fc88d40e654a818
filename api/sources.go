package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

func (s *Server) registerSources(g *echo.Group) {
	g.POST("/sources", s.createSource)
	g.GET("/sources", s.listSources)
	g.GET("/sources/:name", s.getSource)
	g.DELETE("/sources/:name", s.deleteSource)
	g.PUT("/sources/:name/tools", s.replaceCatalog)
	g.DELETE("/sources/:name/observed-queries", s.forgetObserved)
}

// sourceView is a source as the API shows it.
type sourceView struct {
	Name       string          `json:"name"`
	Kind       db.SourceKind   `json:"kind"`
	Config     json.RawMessage `json:"config,omitempty"`
	ReviewMode bool            `json:"review_mode"`
	Interval   string          `json:"interval,omitempty"`
	// Tools counts the source's tools; Enriched those with every enrichment output for their
	// current definition; Embedded those with a vector in the active profile's current set;
	// Indexed those in the lexical index with no change of theirs waiting to be indexed.
	Tools     int64         `json:"tools"`
	Enriched  int64         `json:"enriched"`
	Embedded  int64         `json:"embedded"`
	Indexed   int64         `json:"indexed"`
	LastSync  *lastSyncView `json:"last_sync"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

type lastSyncView struct {
	State      db.SyncRunState `json:"state"`
	Created    int32           `json:"created"`
	Updated    int32           `json:"updated"`
	Deleted    int32           `json:"deleted"`
	Unchanged  int32           `json:"unchanged"`
	Pending    int32           `json:"pending"`
	Skipped    json.RawMessage `json:"skipped"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Error      *string         `json:"error"`
}

// sourceViews shows every source, or only the one called name, in one query whatever the
// number of sources.
func (s *Server) sourceViews(ctx context.Context, name *string) ([]sourceView, error) {
	rows, err := db.New(s.deps.Pool).ListSourceSummaries(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]sourceView, len(rows))
	for i, r := range rows {
		src := r.Source
		v := sourceView{Name: src.Name, Kind: src.Kind, ReviewMode: src.ReviewMode, Tools: r.Tools,
			Enriched: r.Enriched, Embedded: r.Embedded, Indexed: r.Indexed, CreatedAt: src.CreatedAt, UpdatedAt: src.UpdatedAt}
		if string(src.Config) != "{}" {
			v.Config = redactConfig(src.Config)
		}
		if r.RunError != nil {
			// Errors are recorded scrubbed; this also covers runs recorded before that.
			cfg, _ := mcpclient.ParseConfig(src.Config)
			msg := cfg.Scrub(errors.New(*r.RunError)).Error()
			r.RunError = &msg
		}
		if src.Kind != db.SourceCatalog {
			v.Interval = formatInterval(src.SyncInterval)
		}
		if r.RunStartedAt != nil { // the source has a sync run: every run column is set
			v.LastSync = &lastSyncView{State: r.RunState, Created: r.RunCreated.Int32, Updated: r.RunUpdated.Int32,
				Deleted: r.RunDeleted.Int32, Unchanged: r.RunUnchanged.Int32, Pending: r.RunPending.Int32,
				Skipped: r.RunSkipped, StartedAt: *r.RunStartedAt, FinishedAt: r.RunFinishedAt, Error: r.RunError}
		}
		out[i] = v
	}
	return out, nil
}

// viewSource shows the source called name; a source deleted meanwhile is not found.
func (s *Server) viewSource(ctx context.Context, name string) (sourceView, error) {
	vs, err := s.sourceViews(ctx, &name)
	if err != nil {
		return sourceView{}, err
	}
	if len(vs) == 0 {
		return sourceView{}, notFound("source %q not found", name)
	}
	return vs[0], nil
}

// createSourceRequest is the body of POST /v1/sources. A catalog source carries its tools;
// an MCP source says how to reach its server.
type createSourceRequest struct {
	Name  string            `json:"name"`
	Kind  db.SourceKind     `json:"kind"`
	Tools []json.RawMessage `json:"tools"`
	mcpSourceFields
}

// redactConfig hides a source's credentials (mcpclient.Config.Redacted): the values of its
// env and headers, and its URL's user info and credential-looking query parameters.
func redactConfig(raw json.RawMessage) json.RawMessage {
	cfg, err := mcpclient.ParseConfig(raw)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	out, err := json.Marshal(cfg.Redacted())
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

func (s *Server) createSource(c echo.Context) error {
	var req createSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if !catalog.ValidSourceName(req.Name) {
		return badRequest("name %q: want 1-32 characters of a-z 0-9 and -", req.Name)
	}
	switch req.Kind {
	case db.SourceCatalog:
	case mcpclient.KindStdio, mcpclient.KindHTTP:
		if len(req.Tools) > 0 {
			return badRequest("tools: an MCP source's tools come from its server")
		}
	default:
		return badRequest("kind %q: want catalog, mcp_stdio or mcp_http", req.Kind)
	}
	ctx := c.Request().Context()
	if _, err := db.New(s.deps.Pool).GetSourceByName(ctx, req.Name); err == nil {
		return conflict("source %q already exists", req.Name)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if req.Kind != db.SourceCatalog {
		return s.createMCPSource(c, req.Name, req.Kind, req.mcpSourceFields)
	}
	if !reflect.ValueOf(req.mcpSourceFields).IsZero() {
		return badRequest("command, args, env, url, headers, interval and review_mode are for MCP sources")
	}
	tools, err := parseInlineTools(req.Tools)
	if err != nil {
		return err
	}
	if err := s.checkCatalogTools(len(tools)); err != nil {
		return err
	}
	src, res, err := sources.Import(ctx, s.deps.Pool, s.queue, req.Name, tools)
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, src.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"source": v, "result": res})
}

// parseInlineTools reads the tools array of a request through the catalog parser, so every
// supported format and every validation rule applies; line numbers become array positions.
func parseInlineTools(raw []json.RawMessage) ([]catalog.Tool, error) {
	if len(raw) == 0 {
		return nil, badRequest("tools: a catalog source needs at least one tool")
	}
	var buf bytes.Buffer
	for _, r := range raw {
		var compact bytes.Buffer
		if err := json.Compact(&compact, r); err != nil {
			return nil, badRequest("tools: %v", err)
		}
		buf.Write(compact.Bytes())
		buf.WriteByte('\n')
	}
	return catalog.Parse(&buf)
}

func (s *Server) listSources(c echo.Context) error {
	out, err := s.sourceViews(c.Request().Context(), nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"sources": out})
}

func (s *Server) getSource(c echo.Context) error {
	v, err := s.viewSource(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// deleteSource deletes a source, its tools with it, and the enrichment jobs of those tools
// that still wait (jobs.DeleteWaitingEnrichJobs), in one transaction.
func (s *Server) deleteSource(c echo.Context) error {
	ctx, name := c.Request().Context(), c.Param("name")
	var n int64
	err := pgx.BeginFunc(ctx, s.deps.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		src, err := q.GetSourceByName(ctx, name)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // n stays 0: not found
		} else if err != nil {
			return err
		}
		// The source's lock first, as every catalog writer takes it (docs/architecture.md,
		// Lock order): an import under way commits its tools and their jobs before these
		// are deleted, rather than queueing jobs after.
		if err := q.LockSource(ctx, int32(src.ID)); err != nil {
			return err
		}
		dropped, err := jobs.DeleteWaitingEnrichJobs(ctx, tx, name)
		if err != nil {
			return err
		}
		if n, err = q.DeleteSource(ctx, name); err != nil {
			return err
		}
		if n > 0 && dropped > 0 {
			s.log.InfoContext(ctx, "deleted the waiting enrichment jobs of a deleted source", "source", name, "jobs", dropped)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound("source %q not found", name)
	}
	// The search never returns a deleted tool (it checks every result against tools); this
	// drops the index rows now rather than at the next lexical_index run.
	if _, err := lexical.Flush(context.WithoutCancel(c.Request().Context()), s.deps.Pool); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// replaceCatalog makes a catalog source's tools equal to the body, a catalog file in any
// format catalog.Parse reads. The source is created when missing.
func (s *Server) replaceCatalog(c echo.Context) error {
	if err := requireMediaType(c.Request(), catalogTypes); err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	tools, err := catalog.Parse(bytes.NewReader(body))
	if err != nil {
		return err
	}
	if err := s.checkCatalogTools(len(tools)); err != nil {
		return err
	}
	ctx := c.Request().Context()
	src, res, err := sources.Import(ctx, s.deps.Pool, s.queue, c.Param("name"), tools)
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, src.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"source": v, "result": res})
}

// forgetObserved removes the observed queries of every tool of the source (admin only:
// they are other users' words), recombines those tools' vectors and refreshes the lexical
// index before it answers; the source's searches until now are forgotten.
func (s *Server) forgetObserved(c echo.Context) error {
	svc := observed.Service{Pool: s.deps.Pool, Logger: s.log}
	rep, err := svc.Forget(context.WithoutCancel(c.Request().Context()), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
