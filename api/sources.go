package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/sources"
)

func (s *Server) registerSources(g *echo.Group) {
	g.POST("/sources", s.createSource)
	g.GET("/sources", s.listSources)
	g.GET("/sources/:name", s.getSource)
	g.DELETE("/sources/:name", s.deleteSource)
	g.PUT("/sources/:name/tools", s.replaceCatalog)
	g.DELETE("/sources/:name/observed-queries", s.forgetObserved)
	g.GET("/sources/:name/runs", s.listSyncRuns)
}

// Sync run listing limits (GET /v1/sources/{name}/runs).
const (
	defaultRunLimit = 50
	maxRunLimit     = 500
)

// syncRunView is one sync (or catalog import) of a source.
type syncRunView struct {
	ID int64 `json:"id"`
	lastSyncView
}

// listSyncRuns answers GET /v1/sources/{name}/runs?limit=&before=: the source's sync runs,
// newest first; next is the before of the following page, absent on the last one. A run's
// error is shown scrubbed of the source's credentials, as in the source's last_sync.
func (s *Server) listSyncRuns(c echo.Context) error {
	limit := defaultRunLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRunLimit {
			return badRequest("limit %q: want an integer from 1 to %d", v, maxRunLimit)
		}
		limit = n
	}
	var before int64
	if v := c.QueryParam("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return badRequest("before %q: want the id of a run (next of the previous page)", v)
		}
		before = n
	}
	src, runs, err := sources.Runs(c.Request().Context(), s.deps.Pool, c.Param("name"), before, limit)
	if err != nil {
		return err
	}
	cfg, _ := mcpclient.ParseConfig(src.Config)
	out := struct {
		Runs []syncRunView `json:"runs"`
		Next string        `json:"next,omitempty"`
	}{Runs: make([]syncRunView, len(runs))}
	for i, r := range runs {
		if r.Error != nil {
			msg := cfg.Scrub(errors.New(*r.Error)).Error()
			r.Error = &msg
		}
		out.Runs[i] = syncRunView{ID: r.ID, lastSyncView: lastSyncView{State: r.State, Created: r.Created, Updated: r.Updated,
			Deleted: r.Deleted, Unchanged: r.Unchanged, Pending: r.Pending, Skipped: r.Skipped, StartedAt: r.StartedAt,
			FinishedAt: r.FinishedAt, Error: r.Error}}
	}
	if len(runs) == limit {
		out.Next = strconv.FormatInt(runs[len(runs)-1].ID, 10)
	}
	return c.JSON(http.StatusOK, out)
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
	Tools    int64 `json:"tools"`
	Enriched int64 `json:"enriched"`
	// EnrichmentFailed counts the tools one of whose steps failed for their current
	// definition (recorded, the tool stored with the components it has).
	EnrichmentFailed int64 `json:"enrichment_failed"`
	Embedded         int64 `json:"embedded"`
	Indexed          int64 `json:"indexed"`
	// Pending counts the tools not yet both enriched and embedded (their enrich_tool job
	// waits, runs, or failed for good); FullyEnriched is true when none is pending and no
	// tool of the source waits in the lexical index's queue.
	Pending       int64         `json:"pending"`
	FullyEnriched bool          `json:"fully_enriched"`
	LastSync      *lastSyncView `json:"last_sync"`
	// Authorization is the OAuth authorization of an mcp_http source configured for OAuth
	// (docs/upstream-oauth.md); absent for every other source. It never holds a token.
	Authorization *authorizationView `json:"authorization,omitempty"`
	CreatedAt     time.Time          `json:"created_at"`
	UpdatedAt     time.Time          `json:"updated_at"`
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
	rows, err := s.sources.Summaries(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]sourceView, len(rows))
	for i, r := range rows {
		src := r.Source
		v := sourceView{Name: src.Name, Kind: src.Kind, ReviewMode: src.ReviewMode, Tools: r.Tools,
			Enriched: r.Enriched, EnrichmentFailed: r.EnrichmentFailed, Embedded: r.Embedded, Indexed: r.Indexed,
			Pending: r.Pending, FullyEnriched: r.FullyEnriched, CreatedAt: src.CreatedAt, UpdatedAt: src.UpdatedAt}
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
			v.Interval = sources.FormatInterval(src.SyncInterval)
		}
		if cfg, _ := mcpclient.ParseConfig(src.Config); cfg.OAuth != nil {
			v.Authorization = newAuthorizationView(r)
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
		return sourceView{}, &sources.SourceNotFoundError{Name: name}
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

// createSource creates a catalog source with its tools, or an MCP source with its first
// sync queued (sources.Service.Create).
func (s *Server) createSource(c echo.Context) error {
	var req createSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	f := req.mcpSourceFields
	out, err := s.sources.Create(ctx, sources.NewSource{Name: req.Name, Kind: req.Kind, Tools: req.Tools,
		MCP: sources.MCPSettings{Command: f.Command, Args: f.Args, Env: f.Env, URL: f.URL, Headers: f.Headers,
			OAuth: f.OAuth, Interval: f.Interval, ReviewMode: f.ReviewMode},
		CheckTools: s.checkCatalogTools})
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, out.Source.Name)
	if err != nil {
		return err
	}
	if req.Kind != db.SourceCatalog {
		return c.JSON(http.StatusCreated, map[string]any{"source": v, "sync_job_id": out.SyncJobID})
	}
	return c.JSON(http.StatusCreated, map[string]any{"source": v, "result": out.Result})
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
// that still wait, in one transaction (sources.Service.Delete).
func (s *Server) deleteSource(c echo.Context) error {
	if err := s.sources.Delete(c.Request().Context(), c.Param("name")); err != nil {
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
