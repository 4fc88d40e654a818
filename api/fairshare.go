package api

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

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
// (each runs every branch of the statement) and per started kUnit of k, and one more for
// explain (a second statement over the results). A plain search (one query, k up to 25) is
// one unit; the heaviest (eight variants, k = 100, explain) is 33. The share is counted
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
	return cost
}

// fairShare bounds the search units each key has in flight: a search over its key's share
// is refused at once with 429 instead of waiting for a database connection, so that one
// key's flood of heavy searches cannot take the pool from the others. The count is the
// process's own: with several instances behind a balancer, a key may have its share on
// each.
type fairShare struct {
	units int // per key; 0 means no bound
	mu    sync.Mutex
	held  map[int64]int // key id → units in flight
}

func newFairShare(units int) *fairShare {
	return &fairShare{units: units, held: map[int64]int{}}
}

// acquire takes cost units of caller's share and returns their release, or a 429 when the
// key has too many in flight. A search costing more than the whole share takes the whole
// share: it runs alone. A caller without a key (open mode) has no share to keep.
func (f *fairShare) acquire(caller auth.Caller, cost int) (release func(), err error) {
	if f.units <= 0 || caller.KeyID == 0 {
		return func() {}, nil
	}
	cost = min(max(cost, 1), f.units)
	f.mu.Lock()
	defer f.mu.Unlock()
	held := f.held[caller.KeyID]
	if held+cost > f.units {
		return nil, &Error{Status: http.StatusTooManyRequests, Code: "concurrency_limited",
			Message: fmt.Sprintf("this key has %d of its %d search units in flight and this search needs %d; retry when one has answered (TOOLGATE_KEY_SEARCH_UNITS)",
				held, f.units, cost),
			Details: map[string]int{"units": f.units, "in_flight": held, "cost": cost, "retry_after_s": 1}}
	}
	f.held[caller.KeyID] = held + cost
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.held[caller.KeyID] -= cost; f.held[caller.KeyID] <= 0 {
				delete(f.held, caller.KeyID)
			}
		})
	}, nil
}

// acquireFor is acquire for a request: a refusal also says when to retry (Retry-After:
// searches answer in milliseconds, so the next second is the earliest a client should).
func (f *fairShare) acquireFor(c echo.Context, caller auth.Caller, cost int) (release func(), err error) {
	release, err = f.acquire(caller, cost)
	if err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(1))
	}
	return release, err
}
