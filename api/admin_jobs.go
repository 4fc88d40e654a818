package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/jobs"
)

// Job listing limits.
const (
	defaultJobLimit = 50
	maxJobLimit     = 500
)

// registerJobs serves River job visibility for operators: list with filters, one job,
// retry and cancel.
func (s *Server) registerJobs(g *echo.Group) {
	g.GET("/jobs", s.listJobs)
	g.GET("/jobs/summary", s.jobSummary)
	g.GET("/jobs/:id", s.getJob)
	g.POST("/jobs/:id/retry", s.retryJob)
	g.POST("/jobs/:id/cancel", s.cancelJob)
}

// jobView is a River job as the admin API shows it.
type jobView struct {
	ID          int64                    `json:"id"`
	Kind        string                   `json:"kind"`
	Queue       string                   `json:"queue"`
	State       rivertype.JobState       `json:"state"`
	Attempt     int                      `json:"attempt"`
	MaxAttempts int                      `json:"max_attempts"`
	Priority    int                      `json:"priority"`
	Errors      []rivertype.AttemptError `json:"errors"`
	CreatedAt   time.Time                `json:"created_at"`
	ScheduledAt time.Time                `json:"scheduled_at"`
	AttemptedAt *time.Time               `json:"attempted_at"`
	FinalizedAt *time.Time               `json:"finalized_at"`
	Tags        []string                 `json:"tags"`
	Args        json.RawMessage          `json:"args"`
	Metadata    json.RawMessage          `json:"metadata"`
	// Progress of a job that reports it (re-weights: done/total tools); absent otherwise.
	Progress *jobs.JobProgress `json:"progress,omitempty"`
	// Subject names what the args' id stands for (a sync's source, an enrichment's tool, a
	// re-weight's or a tune's profile); absent when the args carry none or it is gone.
	Subject *jobSubject `json:"subject,omitempty"`
}

// jobSubject is the thing a job works on: kind source, tool, profile or tune (the profile
// a tune creates), and its name.
type jobSubject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// subjectIDs are the ids job args carry (jobs.SyncArgs, EnrichArgs, ReweightArgs, TuneArgs).
type subjectIDs struct {
	SourceID int64 `json:"source_id"`
	ToolID   int64 `json:"tool_id"`
	SetID    int64 `json:"set_id"`
	TuneID   int64 `json:"tune_id"`
}

// nameSubjects sets the Subject of each view whose args carry an id, in one query.
func (s *Server) nameSubjects(ctx context.Context, views []jobView) error {
	ids := make([]subjectIDs, len(views))
	var p db.JobSubjectsParams
	for i, v := range views {
		if json.Unmarshal(v.Args, &ids[i]) != nil {
			continue // args of another shape carry no subject
		}
		for _, x := range []struct {
			id   int64
			list *[]int64
		}{{ids[i].SourceID, &p.SourceIds}, {ids[i].ToolID, &p.ToolIds}, {ids[i].SetID, &p.SetIds}, {ids[i].TuneID, &p.TuneIds}} {
			if x.id != 0 {
				*x.list = append(*x.list, x.id)
			}
		}
	}
	if len(p.SourceIds)+len(p.ToolIds)+len(p.SetIds)+len(p.TuneIds) == 0 {
		return nil
	}
	rows, err := db.New(s.deps.Pool).JobSubjects(ctx, p)
	if err != nil {
		return err
	}
	type key struct {
		kind string
		id   int64
	}
	names := make(map[key]string, len(rows))
	for _, r := range rows {
		names[key{r.Kind, r.ID}] = r.Name
	}
	for i := range views {
		for _, k := range []key{{"source", ids[i].SourceID}, {"tool", ids[i].ToolID}, {"profile", ids[i].SetID}, {"tune", ids[i].TuneID}} {
			if name, ok := names[k]; ok && k.id != 0 {
				views[i].Subject = &jobSubject{Kind: k.kind, Name: name}
			}
		}
	}
	return nil
}

// viewJob shows j with its errors scrubbed of credentials by sc (jobs.ErrorScrubber: rows
// written before errors were scrubbed hold them).
func viewJob(j *rivertype.JobRow, sc *jobs.ErrorScrubber) jobView {
	errs := j.Errors
	if errs == nil {
		errs = []rivertype.AttemptError{}
	}
	for i := range errs {
		errs[i].Trace = "" // panic stacks stay in the job row and the worker's log
		errs[i].Error = sc.Text(errs[i].Error)
	}
	tags := j.Tags
	if tags == nil {
		tags = []string{}
	}
	return jobView{
		ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: j.State, Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		Priority: j.Priority, Errors: errs, CreatedAt: j.CreatedAt, ScheduledAt: j.ScheduledAt,
		AttemptedAt: j.AttemptedAt, FinalizedAt: j.FinalizedAt, Tags: tags,
		Args: json.RawMessage(j.EncodedArgs), Metadata: json.RawMessage(j.Metadata),
	}
}

// listJobs answers GET /admin/jobs?kind=a,b&state=x,y&limit=N&after=CURSOR, newest
// first. next is the cursor of the following page, absent on the last one.
func (s *Server) listJobs(c echo.Context) error {
	params := river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	if kinds := splitList(c.QueryParam("kind")); len(kinds) > 0 {
		params = params.Kinds(kinds...)
	}
	if names := splitList(c.QueryParam("state")); len(names) > 0 {
		states := make([]rivertype.JobState, 0, len(names))
		for _, n := range names {
			st := rivertype.JobState(n)
			if !slices.Contains(rivertype.JobStates(), st) {
				return badRequest("unknown job state %q (want one of %v)", n, rivertype.JobStates())
			}
			states = append(states, st)
		}
		params = params.States(states...)
	}
	limit := defaultJobLimit
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxJobLimit {
			return badRequest("limit must be an integer from 1 to %d", maxJobLimit)
		}
		limit = n
	}
	params = params.First(limit)
	if v := c.QueryParam("after"); v != "" {
		var cur river.JobListCursor
		if err := cur.UnmarshalText([]byte(v)); err != nil {
			return badRequest("after is not a cursor returned as next by this endpoint")
		}
		params = params.After(&cur)
	}
	res, err := s.deps.River.JobList(c.Request().Context(), params)
	if err != nil {
		return err
	}
	sc, err := jobs.NewErrorScrubber(c.Request().Context(), s.deps.Pool)
	if err != nil {
		return err
	}
	out := struct {
		Jobs []jobView `json:"jobs"`
		Next string    `json:"next,omitempty"`
	}{Jobs: make([]jobView, 0, len(res.Jobs))}
	for _, j := range res.Jobs {
		out.Jobs = append(out.Jobs, viewJob(j, sc))
	}
	if err := s.nameSubjects(c.Request().Context(), out.Jobs); err != nil {
		return err
	}
	if len(res.Jobs) == limit && res.LastCursor != nil {
		next, err := res.LastCursor.MarshalText()
		if err != nil {
			return err
		}
		out.Next = string(next)
	}
	return c.JSON(http.StatusOK, out)
}

// jobSummary answers GET /admin/jobs/summary: the number of jobs of each kind in each
// state (jobs.Summary), which the paged list cannot give.
func (s *Server) jobSummary(c echo.Context) error {
	counts, err := jobs.Summary(c.Request().Context(), s.deps.Pool)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"counts": counts})
}

func (s *Server) getJob(c echo.Context) error {
	id, err := jobID(c)
	if err != nil {
		return err
	}
	job, err := s.deps.River.JobGet(c.Request().Context(), id)
	if err != nil {
		return jobError(err, id)
	}
	v, err := s.scrubbedJob(c.Request().Context(), job)
	if err != nil {
		return err
	}
	if v.Progress, err = jobs.Progress(c.Request().Context(), s.deps.Pool, job); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// retryJob makes a finished or waiting job available to run now. A running job is retried
// only when its process died: its attempt is older than its kind's timeout plus
// jobs.WindDown, so no live worker can still be on it; a job that may still be worked
// answers 409 job_running.
func (s *Server) retryJob(c echo.Context) error {
	id, err := jobID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	job, err := s.deps.River.JobRetry(ctx, id) // leaves a running job as it is
	if err != nil {
		return jobError(err, id)
	}
	if job.State == rivertype.JobStateRunning {
		retried, err := jobs.RetryAbandoned(ctx, s.deps.Pool, job, s.abandonedAfter(job.Kind))
		if err != nil {
			return err
		}
		if !retried {
			return s.jobRunning(job)
		}
		if job, err = s.deps.River.JobGet(ctx, id); err != nil {
			return jobError(err, id)
		}
	}
	return s.jobJSON(c, http.StatusOK, job)
}

// cancelJob cancels a job that has not finished: a waiting job is cancelled at once
// (200), and so is a running one whose process died (its attempt is older than its kind's
// timeout plus jobs.WindDown); a running one that may still be worked is asked to stop
// (202, its state changes when the worker returns). A job that already completed or was
// discarded cannot be cancelled (409).
func (s *Server) cancelJob(c echo.Context) error {
	id, err := jobID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	job, err := s.deps.River.JobGet(ctx, id)
	if err != nil {
		return jobError(err, id)
	}
	if job.State == rivertype.JobStateRunning {
		cancelled, err := jobs.CancelAbandoned(ctx, s.deps.Pool, job, s.abandonedAfter(job.Kind))
		if err != nil {
			return err
		}
		if cancelled {
			if job, err = s.deps.River.JobGet(ctx, id); err != nil {
				return jobError(err, id)
			}
			return s.jobJSON(c, http.StatusOK, job)
		}
	}
	if job, err = s.deps.River.JobCancel(ctx, id); err != nil {
		return jobError(err, id)
	}
	switch job.State {
	case rivertype.JobStateCompleted, rivertype.JobStateDiscarded:
		return conflict("job %d already finished (%s)", id, job.State)
	case rivertype.JobStateRunning:
		return s.jobJSON(c, http.StatusAccepted, job)
	}
	return s.jobJSON(c, http.StatusOK, job)
}

// scrubbedJob shows one job, its errors scrubbed of the credentials of the sources of now.
func (s *Server) scrubbedJob(ctx context.Context, job *rivertype.JobRow) (jobView, error) {
	sc, err := jobs.NewErrorScrubber(ctx, s.deps.Pool)
	if err != nil {
		return jobView{}, err
	}
	v := []jobView{viewJob(job, sc)}
	err = s.nameSubjects(ctx, v)
	return v[0], err
}

// jobJSON answers with one job (scrubbedJob).
func (s *Server) jobJSON(c echo.Context, status int, job *rivertype.JobRow) error {
	v, err := s.scrubbedJob(c.Request().Context(), job)
	if err != nil {
		return err
	}
	return c.JSON(status, v)
}

// abandonedAfter is how long after its attempt began a running job of kind has certainly
// been abandoned by its process.
func (s *Server) abandonedAfter(kind string) time.Duration {
	if s.deps.AbandonedAfter == nil {
		return jobs.DefaultAbandonedAfter(kind)
	}
	return s.deps.AbandonedAfter(kind)
}

// jobRunning is the 409 for a running job that a live worker may still be on, saying when
// it will count as abandoned if its process has in fact stopped.
func (s *Server) jobRunning(job *rivertype.JobRow) *Error {
	began := job.CreatedAt
	if job.AttemptedAt != nil {
		began = *job.AttemptedAt
	}
	abandoned := began.Add(s.abandonedAfter(job.Kind))
	return &Error{Status: http.StatusConflict, Code: "job_running",
		Message: fmt.Sprintf("job %d is running (attempt %d began %s ago) and its worker may still be on it until %s; "+
			"cancel it, or retry it after that if its process stopped", job.ID, job.Attempt,
			time.Since(began).Round(time.Second), abandoned.UTC().Format(time.RFC3339)),
		Details: map[string]time.Time{"attempted_at": began, "abandoned_at": abandoned}}
}

func jobID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("job id must be a positive integer, got %q", c.Param("id"))
	}
	return id, nil
}

func jobError(err error, id int64) error {
	if errors.Is(err, rivertype.ErrNotFound) {
		return notFound("job %d not found", id)
	}
	return err
}

// splitList splits a comma-separated query value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
