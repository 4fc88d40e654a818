package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
)

func (s *Server) registerTools(g *echo.Group) {
	g.GET("/tools", s.listTools)
	g.GET("/tools/export", s.exportTools)
	g.GET("/tools/:name", s.getTool)
}

// Tool listing limits (GET /v1/tools).
const (
	defaultToolLimit = 50
	maxToolLimit     = 500
	maxToolQuery     = 200 // characters of q
)

// toolSummaryView is one tool of GET /v1/tools: its definition's text and its states, without
// the schemas (GET /v1/tools/{name} has them).
type toolSummaryView struct {
	Name         string         `json:"name"`
	OriginalName string         `json:"original_name"`
	Source       string         `json:"source"`
	Title        *string        `json:"title"`
	Description  string         `json:"description"`
	Enabled      bool           `json:"enabled"`
	ReviewState  db.ReviewState `json:"review_state"`
	UpdatedAt    time.Time      `json:"updated_at"`
	// Enriched: every enrichment step has an output for the current definition; Embedded:
	// the tool has a vector in the active profile's current set.
	Enriched bool `json:"enriched"`
	Embedded bool `json:"embedded"`
}

// listTools answers GET /v1/tools?source=&review_state=&q=&limit=&after=: a page of tools,
// keyset-paged (sources.ListTools); next is the after of the following page, absent on the
// last one.
func (s *Server) listTools(c echo.Context) error {
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	tq := sources.ToolQuery{Source: c.QueryParam("source"), Visible: caller.Sources, Q: c.QueryParam("q"),
		After: c.QueryParam("after"), Limit: defaultToolLimit}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxToolLimit {
			return badRequest("limit %q: want an integer from 1 to %d", v, maxToolLimit)
		}
		tq.Limit = n
	}
	switch rs := db.ReviewState(c.QueryParam("review_state")); rs {
	case "", db.ReviewApproved, db.ReviewPending:
		tq.ReviewState = rs
	default:
		return badRequest("review_state %q: want %s or %s", rs, db.ReviewApproved, db.ReviewPending)
	}
	if n := utf8.RuneCountInString(tq.Q); n > maxToolQuery {
		return badRequest("q has %d characters, at most %d", n, maxToolQuery)
	}
	page, err := sources.ListTools(c.Request().Context(), s.deps.Pool, tq)
	if err != nil {
		return err
	}
	out := struct {
		Tools []toolSummaryView `json:"tools"`
		Next  string            `json:"next,omitempty"`
	}{Tools: make([]toolSummaryView, len(page.Tools)), Next: page.Next}
	for i, t := range page.Tools {
		out.Tools[i] = toolSummaryView(t)
	}
	return c.JSON(http.StatusOK, out)
}

// toolView is one tool with its enrichment, as GET /v1/tools/:name shows it.
type toolView struct {
	Name         string          `json:"name"`
	OriginalName string          `json:"original_name"`
	Source       string          `json:"source"`
	Title        *string         `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	ContentHash  string          `json:"content_hash"`
	Enabled      bool            `json:"enabled"`
	ReviewState  db.ReviewState  `json:"review_state"`
	Enrichment   enrichmentView  `json:"enrichment"`
	// Profile is the Tool-DE tool_profile; null when not generated yet or when it failed its
	// faithfulness judgement (the original document is then used alone).
	Profile    *enrich.Profile `json:"profile"`
	Questions  []string        `json:"questions"`
	Topics     []string        `json:"topics"`
	Components []componentView `json:"components"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

type enrichmentView struct {
	// Status is "enriched" when every step is done for the current definition and the tool
	// has a vector in the active profile's vector set, "pending" otherwise.
	Status    string     `json:"status"`
	HasVector bool       `json:"has_vector"`
	Steps     []stepView `json:"steps"`
}

type stepView struct {
	Step             string    `json:"step"`
	Model            string    `json:"model"`
	Current          bool      `json:"current"` // produced for the current definition
	PromptTokens     int32     `json:"prompt_tokens"`
	CompletionTokens int32     `json:"completion_tokens"`
	CreatedAt        time.Time `json:"created_at"`
	// Failed is why the step's output was malformed beyond repair (the tool was stored
	// without it); absent when the step has an output.
	Failed string `json:"failed,omitempty"`
}

type componentView struct {
	Kind         string    `json:"kind"`
	Ordinal      int32     `json:"ordinal"`
	Text         string    `json:"text"`
	Model        *string   `json:"model"`
	HasEmbedding bool      `json:"has_embedding"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func (s *Server) getTool(c echo.Context) error {
	ctx := c.Request().Context()
	st, err := enrich.LoadTool(ctx, s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	t := st.Tool
	src, _, _ := catalog.SplitNamespaced(t.Name)
	v := toolView{
		Name: t.Name, OriginalName: t.OriginalName, Source: src, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations, ContentHash: t.ContentHash,
		Enabled: t.Enabled, ReviewState: t.ReviewState, Questions: []string{}, Topics: []string{},
		Components: []componentView{}, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	current := 0
	v.Enrichment.Steps = []stepView{}
	for _, e := range st.Steps {
		sv := stepView{Step: e.Step, Model: e.Model, Current: e.ContentHash == t.ContentHash,
			PromptTokens: e.PromptTokens, CompletionTokens: e.CompletionTokens, CreatedAt: e.CreatedAt}
		var failed struct {
			Failed string `json:"failed"`
		}
		if json.Unmarshal(e.Output, &failed) == nil {
			sv.Failed = failed.Failed
		}
		v.Enrichment.Steps = append(v.Enrichment.Steps, sv)
		if !sv.Current {
			continue
		}
		// enriched means the three steps every enricher makes; the heuristic's expansion is a fourth
		if e.Step != enrich.StepExpansion {
			current++
		}
		// Outputs were validated when stored; one that does not decode is shown as absent.
		switch e.Step {
		case enrich.StepProfile:
			var o struct {
				Profile *enrich.Profile `json:"tool_profile"`
			}
			if json.Unmarshal(e.Output, &o) == nil {
				v.Profile = o.Profile
			}
		case enrich.StepQuestions:
			var o struct {
				Questions []string `json:"questions"`
			}
			if json.Unmarshal(e.Output, &o) == nil && o.Questions != nil {
				v.Questions = o.Questions
			}
		case enrich.StepTopics:
			var o struct {
				Topics []string `json:"topics"`
			}
			if json.Unmarshal(e.Output, &o) == nil && o.Topics != nil {
				v.Topics = o.Topics
			}
		}
	}
	v.Enrichment.HasVector = st.HasVector
	v.Enrichment.Status = "pending"
	if current == 3 && v.Enrichment.HasVector {
		v.Enrichment.Status = "enriched"
	}
	// Observed queries are other callers' words: only an admin sees them (the route is
	// admin-only today; this holds if it is ever opened to search keys).
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	admin := caller.Scope.Allows(auth.ScopeAdmin)
	for _, cp := range st.Components {
		if cp.Kind == tdwa.KindObserved && !admin {
			continue
		}
		v.Components = append(v.Components, componentView(cp))
	}
	return c.JSON(http.StatusOK, v)
}
