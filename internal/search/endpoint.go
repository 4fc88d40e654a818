package search

// Endpoint is where a search came from, as the retrieval log records it
// (search_log.endpoint; docs/analytics.md). It is set by the code that serves the search,
// never read from a request body (Request.Endpoint is not a JSON field), so a POST /search
// cannot pass for a find_tools.
type Endpoint string

const (
	EndpointREST      Endpoint = "rest"       // POST /search
	EndpointFindTools Endpoint = "find_tools" // the MCP meta-tool
	// EndpointInternal is code that searches on nobody's behalf (evaluations, tests): what
	// a Request that names no endpoint is logged as.
	EndpointInternal Endpoint = "internal"
)
