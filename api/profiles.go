package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/tune"
)

// registerProfiles registers the weight profile and re-weighting endpoints under /admin.
func (s *Server) registerProfiles(g *echo.Group) {
	g.GET("/profiles", s.listProfiles)
	g.GET("/profiles/:name", s.getProfile)
	g.PUT("/profiles/:name", s.putProfile)
	g.DELETE("/profiles/:name", s.deleteProfile)
	g.POST("/profiles/:name/activate", s.activateProfile)
	g.POST("/profiles/:name/reweight", s.reweightProfile)
	g.POST("/profiles/tune", s.startTune)
	g.GET("/tunes", s.listTunes)
	g.GET("/tunes/:id", s.getTune)
}

// putProfileRequest is the body of PUT /admin/profiles/:name.
type putProfileRequest struct {
	Strategy string             `json:"strategy"`
	Weights  map[string]float64 `json:"weights"`
	Fusion   *profiles.Fusion   `json:"fusion"`
}

// vectorsNote is returned with every profile definition change.
const vectorsNote = "the profile's vectors are unchanged until a re-weight (POST /admin/profiles/{name}/reweight) completes"

func (s *Server) listProfiles(c echo.Context) error {
	ps, err := profiles.List(c.Request().Context(), s.deps.Pool)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"profiles": ps})
}

func (s *Server) getProfile(c echo.Context) error {
	p, err := profiles.Get(c.Request().Context(), s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) putProfile(c echo.Context) error {
	var req putProfileRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	p, created, err := profiles.Put(c.Request().Context(), s.deps.Pool, c.Param("name"),
		tdwa.Profile{Strategy: req.Strategy, Weights: req.Weights}, req.Fusion)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{"profile": p, "created": created, "note": vectorsNote})
}

func (s *Server) deleteProfile(c echo.Context) error {
	if err := profiles.Delete(c.Request().Context(), s.deps.Pool, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) activateProfile(c echo.Context) error {
	p, err := profiles.Activate(c.Request().Context(), s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) reweightProfile(c echo.Context) error {
	start, err := profiles.StartReweight(c.Request().Context(), s.deps.Pool, s.queue, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, start)
}

// startTune answers POST /admin/profiles/tune: 202 with the queued tune and its job, or
// the reason it cannot run (too_few_labels, profile_exists, invalid_tune, not_found).
func (s *Server) startTune(c echo.Context) error {
	var opts tune.Options
	if err := decodeJSON(c, &opts); err != nil {
		return err
	}
	started, err := tune.Start(c.Request().Context(), s.deps.Pool, s.queue, opts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, started)
}

func (s *Server) listTunes(c echo.Context) error {
	ts, err := tune.List(c.Request().Context(), s.deps.Pool)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tunes": ts})
}

func (s *Server) getTune(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return badRequest("tune id %q is not a positive integer", c.Param("id"))
	}
	t, err := tune.Get(c.Request().Context(), s.deps.Pool, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}
