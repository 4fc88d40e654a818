package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

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

// mcpSourceFields are the settings of an MCP source in a create request.
type mcpSourceFields struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// OAuth makes an mcp_http source authorize at its server's authorization server
	// (docs/upstream-oauth.md)
	OAuth      *mcpclient.OAuthConfig `json:"oauth"`
	Interval   *string                `json:"interval"`
	ReviewMode bool                   `json:"review_mode"`
}

// patchSourceRequest changes an MCP source; absent fields stay as they are.
type patchSourceRequest struct {
	Interval   *string                `json:"interval"`
	ReviewMode *bool                  `json:"review_mode"`
	Command    *string                `json:"command"`
	Args       *[]string              `json:"args"`
	Env        *map[string]string     `json:"env"`
	URL        *string                `json:"url"`
	Headers    *map[string]string     `json:"headers"`
	OAuth      *mcpclient.OAuthConfig `json:"oauth"`
}

func (s *Server) patchSource(c echo.Context) error {
	var req patchSourceRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	src, err := s.sources.Update(ctx, c.Param("name"), sources.Change{Interval: req.Interval, ReviewMode: req.ReviewMode,
		Command: req.Command, Args: req.Args, Env: req.Env, URL: req.URL, Headers: req.Headers, OAuth: req.OAuth})
	if err != nil {
		return err
	}
	v, err := s.viewSource(ctx, src.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// syncSource queues a sync of the source now: 202 with the job id. When a sync of the
// source is already waiting or running, that job's id is returned with "duplicate": true.
func (s *Server) syncSource(c echo.Context) error {
	id, dup, err := s.sources.SyncNow(c.Request().Context(), c.Param("name"))
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
	revs, err := sources.History(c.Request().Context(), s.deps.Pool, name, limit)
	if err != nil {
		return err
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
