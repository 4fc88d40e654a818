package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/sources"
)

// registerAdmin registers the access-control and tool-switch endpoints under /admin.
func (s *Server) registerAdmin(g *echo.Group) {
	g.POST("/keys", s.createKey)
	g.GET("/keys", s.listKeys)
	g.DELETE("/keys/:prefix", s.revokeKey)
	g.POST("/tools/:name/disable", s.setToolEnabled(false))
	g.POST("/tools/:name/enable", s.setToolEnabled(true))
	g.GET("/tools/:name/memories", s.listMemories)
	g.DELETE("/tools/:name/memories", s.forgetMemories)
	g.DELETE("/tools/:name/memories/:id", s.forgetMemory)
}

// listMemories is GET /admin/tools/{name}/memories: what the tool learned, every tenant's
// memories of it (docs/learning.md).
func (s *Server) listMemories(c echo.Context) error {
	list, err := s.memories().List(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tool": c.Param("name"), "memories": list})
}

// forgetMemories is DELETE /admin/tools/{name}/memories: the tool forgets what it learned,
// and the searches until now teach it nothing again.
func (s *Server) forgetMemories(c echo.Context) error {
	n, err := s.memories().Forget(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tool": c.Param("name"), "removed": n})
}

// forgetMemory is DELETE /admin/tools/{name}/memories/{id}: the tool forgets one memory (its
// tenant's memories of that query), and its tenant's searches of that query until now teach
// it nothing again.
func (s *Server) forgetMemory(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return notFound("tool %s has no memory %q", c.Param("name"), c.Param("id"))
	}
	n, err := s.memories().ForgetOne(c.Request().Context(), c.Param("name"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tool": c.Param("name"), "removed": n})
}

// memories is the memory service for listing and removal (neither embeds).
func (s *Server) memories() *memory.Service { return &memory.Service{Pool: s.deps.Pool, Logger: s.log} }

// createKeyRequest is the body of POST /admin/keys.
type createKeyRequest struct {
	Name    string     `json:"name"`
	Scope   auth.Scope `json:"scope"`
	Sources []string   `json:"sources"`
	// RatePerMin is auth.DefaultRatePerMin when absent; 0 means unlimited.
	RatePerMin *int `json:"rate_per_min"`
	// Plan is the query plan of the key's searches that ask for none.
	Plan plan.Mode `json:"plan"`
	// Tenant is the search key's tenant (docs/learning.md); absent: a tenant of its own.
	Tenant string `json:"tenant"`
}

func (s *Server) createKey(c echo.Context) error {
	var req createKeyRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	spec := auth.Spec{Name: req.Name, Scope: req.Scope, Sources: req.Sources, RatePerMin: auth.DefaultRatePerMin, Plan: req.Plan,
		Tenant: req.Tenant}
	if req.RatePerMin != nil {
		spec.RatePerMin = *req.RatePerMin
	}
	key, text, err := s.keys.Create(c.Request().Context(), spec)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"key": text, "api_key": key})
}

func (s *Server) listKeys(c echo.Context) error {
	keys, err := s.keys.List(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": keys})
}

func (s *Server) revokeKey(c echo.Context) error {
	key, err := s.keys.RevokePrefix(c.Request().Context(), c.Param("prefix"))
	if err != nil {
		return err
	}
	if s.deps.Gateway != nil {
		// The revocation deleted the key's MCP sessions; close this process's now.
		s.deps.Gateway.EndKeySessions(key.ID)
	}
	return c.JSON(http.StatusOK, map[string]any{"api_key": key})
}

// setToolEnabled switches a tool on or off; a disabled tool is never returned by search.
func (s *Server) setToolEnabled(enabled bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		row, err := sources.SetToolEnabled(c.Request().Context(), s.deps.Pool, c.Param("name"), enabled)
		var missing *catalog.ToolNotFoundError
		if errors.As(err, &missing) {
			// this route's own wording of a missing tool, kept as callers know it
			return notFound("tool %q not found", missing.Name)
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"name": row.Name, "enabled": row.Enabled, "updated_at": row.UpdatedAt})
	}
}
