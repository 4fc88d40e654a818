package db

// This file is written by hand; the others are sqlc's (make generate). sqlc.yaml's column
// overrides give these types to the columns they name, in every row and parameter sqlc
// generates for them, so that Go code compares and stores states only through the
// constants below. The columns' CHECK constraints list the same values
// (internal/postgres/states_test.go checks that they agree).

// VectorSetState is vector_sets.state: where a profile's set of tool vectors is in its
// life cycle (docs/vector-sets.md draws it).
type VectorSetState string

const (
	// VectorSetBuilding: a re-weight is filling the set; searches never read it.
	VectorSetBuilding VectorSetState = "building"
	// VectorSetReady: the set is complete and may be its profile's current set.
	VectorSetReady VectorSetState = "ready"
	// VectorSetRetired: a newer set replaced it; its partition is dropped and its row deleted.
	VectorSetRetired VectorSetState = "retired"
	// VectorSetFailed: its re-weight failed or was cancelled; its vectors are dropped.
	VectorSetFailed VectorSetState = "failed"
)

// ReviewState is tools.review_state: whether the stored definition may be searched.
type ReviewState string

const (
	// ReviewApproved: the stored definition is the server's (or an admin approved it).
	ReviewApproved ReviewState = "approved"
	// ReviewPending: the server now serves a changed definition held for review; the
	// tool is hidden from search until it is decided.
	ReviewPending ReviewState = "pending"
)

// RevisionStatus is tool_revisions.status: what became of one change of a definition.
type RevisionStatus string

const (
	RevisionApplied  RevisionStatus = "applied"  // stored at once (no review)
	RevisionPending  RevisionStatus = "pending"  // held for review
	RevisionApproved RevisionStatus = "approved" // held, then approved
	RevisionRejected RevisionStatus = "rejected" // held, then rejected
)

// SyncRunState is sync_runs.state: one sync or import of a source.
type SyncRunState string

const (
	SyncRunning   SyncRunState = "running"
	SyncSucceeded SyncRunState = "succeeded"
	SyncFailed    SyncRunState = "failed"
)

// SourceKind is sources.kind: where a source's tools come from.
type SourceKind string

const (
	// SourceCatalog: tools pushed by import or PUT /v1/sources/{name}/tools.
	SourceCatalog SourceKind = "catalog"
	// SourceMCPStdio: an MCP server toolgate starts as a process and talks to over stdio.
	SourceMCPStdio SourceKind = "mcp_stdio"
	// SourceMCPHTTP: an MCP server reached over Streamable HTTP.
	SourceMCPHTTP SourceKind = "mcp_http"
)

// IsMCP reports whether a source of kind k is an MCP server (not a pushed catalog).
func (k SourceKind) IsMCP() bool { return k == SourceMCPStdio || k == SourceMCPHTTP }

// LabelSource is search_labels.label_source: how toolgate learnt which tool an agent chose
// after a search (migration 0014).
type LabelSource string

const (
	// LabelCall: the MCP session that made the search called the tool (an implicit label).
	LabelCall LabelSource = "call"
	// LabelFeedback: the agent reported the call (POST /search/{id}/feedback).
	LabelFeedback LabelSource = "feedback"
)

// TuneState is profile_tunes.state: one tuning of TDWA weights from labels.
type TuneState string

const (
	TuneQueued    TuneState = "queued"    // its profile_tune job has not started
	TuneRunning   TuneState = "running"   // the job is working (phase, done, total)
	TuneSucceeded TuneState = "succeeded" // the tuned profile exists and its re-weight was queued
	TuneFailed    TuneState = "failed"    // see error; nothing was created
)

// ExperimentUnit is profile_experiments.unit: what an A/B experiment between weight
// profiles assigns a search to an arm by (migration 0016, docs/experiments.md).
type ExperimentUnit string

const (
	// ExperimentBySession: the search's session (falling back to its key without one).
	ExperimentBySession ExperimentUnit = "session"
	// ExperimentByKey: the search's API key (its caller name without a key).
	ExperimentByKey ExperimentUnit = "key"
)

// ExperimentArm is search_log.arm: which arm of the running experiment served a search
// (NULL: the search was in no experiment).
type ExperimentArm string

const (
	ArmControl   ExperimentArm = "control"   // the control profile's vectors
	ArmCandidate ExperimentArm = "candidate" // the candidate profile's vectors
)
