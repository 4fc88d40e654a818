package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/search"
)

// DefaultKeySearchUnits is how many search units one key may have in flight at once
// (TOOLGATE_KEY_SEARCH_UNITS, docs/auth.md#fair-share): four plain searches, or one heavy
// one (searchCost), so that no key holds more than a few of the pool's connections.
const DefaultKeySearchUnits = 4

// kUnit is how many results one unit of a variant's cost covers: the statement's
// candidate lists and the rendering of the results grow with k.
const kUnit = 25

// searchCost is what a search costs in units of a key's share: one per query variant
// (each runs every branch of the statement) and per started kUnit of k, one more for
// explain (a second statement over the results), and two more for explain_tools (the
// statement again, ranked to its depth, and the explanation). A plain search (one query, k up to 25) is
// one unit; the heaviest (eight variants, k = 100, explain, explain_tools) is 35. The share is counted
// before the body's own checks, so an invalid k counts as its nearest valid value.
func searchCost(req search.Request) int {
	variants := 1 + len(req.Queries)
	k := req.K
	if k <= 0 {
		k = search.DefaultK
	}
	k = min(k, search.MaxK)
	cost := variants * ((k + kUnit - 1) / kUnit)
	if req.Explain {
		cost++
	}
	if len(req.ExplainTools) > 0 {
		cost += 2
	}
	return cost
}

// mcpShareWait is how long a find_tools or use_tool call waits for its key's share before
// it is refused with 429. REST searches are refused at once, with Retry-After, which HTTP
// clients honour; an MCP client drives one JSON-RPC exchange per call and no SDK retries a
// 429, so a burst of an agent fleet's calls on one key queues here instead, holding a
// goroutine and no database connection.
const mcpShareWait = 30 * time.Second

// fairShare bounds the search units each key has in flight: a search over its key's share
// is refused with 429 (or, over MCP, waits for mcpShareWait first) instead of waiting for
// a database connection, so that one key's flood of heavy searches cannot take the pool
// from the others. The count is the process's own: with several instances behind a
// balancer, a key may have its share on each.
type fairShare struct {
	units int // per key
	mu    sync.Mutex
	held  map[string]int // caller's principal (a key, a token subject) → units in flight
	// freed is closed, and replaced, whenever units are released: waiters look again.
	freed chan struct{}
}

func newFairShare(units int) *fairShare {
	return &fairShare{units: units, held: map[string]int{}, freed: make(chan struct{})}
}

// acquire takes cost units of caller's share and returns their release, or a 429 when the
// key has too many in flight and none came free within wait. A search costing more than
// the whole share takes the whole share: it runs alone. A caller without a key (open
// mode) has no share to keep.
func (f *fairShare) acquire(ctx context.Context, caller auth.Caller, cost int, wait time.Duration) (release func(), err error) {
	owner := caller.Principal()
	if owner == "" {
		return func() {}, nil
	}
	cost = min(max(cost, 1), f.units)
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	for {
		f.mu.Lock()
		held := f.held[owner]
		if held+cost <= f.units {
			f.held[owner] = held + cost
			f.mu.Unlock()
			return f.releaser(owner, cost), nil
		}
		freed := f.freed
		f.mu.Unlock()
		refused := &Error{Status: http.StatusTooManyRequests, Code: "concurrency_limited",
			Message: fmt.Sprintf("this key has %d of its %d search units in flight and this search needs %d; retry when one has answered (TOOLGATE_KEY_SEARCH_UNITS)",
				held, f.units, cost),
			Details: map[string]int{"units": f.units, "in_flight": held, "cost": cost, "retry_after_s": 1}}
		if expired == nil {
			return nil, refused
		}
		select {
		case <-freed:
		case <-expired:
			return nil, refused
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// releaser returns cost units of key to its share, once.
func (f *fairShare) releaser(key string, cost int) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.held[key] -= cost; f.held[key] <= 0 {
				delete(f.held, key)
			}
			close(f.freed)
			f.freed = make(chan struct{})
		})
	}
}

// acquireFor is acquire for a request: a refusal also says when to retry (Retry-After:
// searches answer in milliseconds, so the next second is the earliest a client should).
func (f *fairShare) acquireFor(c echo.Context, caller auth.Caller, cost int, wait time.Duration) (release func(), err error) {
	release, err = f.acquire(c.Request().Context(), caller, cost, wait)
	if err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(1))
	}
	return release, err
}
