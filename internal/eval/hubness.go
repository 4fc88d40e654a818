package eval

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// HubK is the cut-off at which hubness counts: a tool enters the top HubK of a search it
// is not a gold tool of.
const HubK = 5

// HubShare is the share of a run's searches above which a tool counts as a hub: one in the
// wrong top HubK of more than 3% of them.
const HubShare = 0.03

// hubWorst is how many of the worst tools a Hubness lists.
const hubWorst = 10

// Hubness measures the tools that crowd into searches they have nothing to do with: a
// short generic document, or one whose enrichment added common words, lands near every
// request. A ranking whose top HubK holds such a tool has one slot less for the right ones.
type Hubness struct {
	// Searches is the number of searches counted.
	Searches int `json:"searches"`
	// MaxShare is the largest share of searches one tool wrongly entered the top HubK of.
	MaxShare float64 `json:"max_share"`
	// Hubs is the number of tools whose share is above HubShare.
	Hubs int `json:"hubs"`
	// SearchesWithHub is the share of searches whose top HubK hold at least one hub.
	SearchesWithHub float64 `json:"searches_with_hub"`
	// Worst are the tools with the most wrong entries, most first (then by name), at most
	// hubWorst of them.
	Worst []HubTool `json:"worst"`
	// OtherServers counts the same, but only a tool's entries into searches none of whose
	// gold tools is of its server (the part of a name before "__", the whole name without
	// one): a sibling of the right tool in the top 5 of a request for its server is a near
	// miss, a tool of another server there is what a hub does. Nil within it.
	OtherServers *Hubness `json:"other_servers,omitempty"`
}

// HubTool is one tool's count of wrong top-HubK entries.
type HubTool struct {
	Tool  string  `json:"tool"`
	Wrong int     `json:"wrong"`
	Share float64 `json:"share"`
}

// hubCounter accumulates the top HubK of each search against its gold tools; other, when
// set, the entries of tools of other servers than the gold tools'.
type hubCounter struct {
	wrong map[string]int
	tops  [][]string // each search's wrong top-HubK tools
	other *hubCounter
}

func newHubCounter() *hubCounter {
	return &hubCounter{wrong: map[string]int{}, other: &hubCounter{wrong: map[string]int{}}}
}

// add counts one search: every tool of its top HubK (each once) that is not gold.
func (h *hubCounter) add(ranking, gold []string) {
	var wrong, other []string
	for _, t := range ranking[:min(HubK, len(ranking))] {
		if slices.Contains(gold, t) || slices.Contains(wrong, t) {
			continue
		}
		wrong = append(wrong, t)
		h.wrong[t]++
		if h.other != nil && !slices.ContainsFunc(gold, func(g string) bool { return server(g) == server(t) }) {
			other = append(other, t)
			h.other.wrong[t]++
		}
	}
	h.tops = append(h.tops, wrong)
	if h.other != nil {
		h.other.tops = append(h.other.tops, other)
	}
}

// server is the server part of a tool's name: before its first "__", or the whole name.
func server(tool string) string {
	s, _, _ := strings.Cut(tool, "__")
	return s
}

func (h *hubCounter) report() Hubness {
	out := h.counts()
	if h.other != nil {
		other := h.other.counts()
		out.OtherServers = &other
	}
	return out
}

func (h *hubCounter) counts() Hubness {
	out := Hubness{Searches: len(h.tops), Worst: []HubTool{}}
	if out.Searches == 0 {
		return out
	}
	n := float64(out.Searches)
	all := make([]HubTool, 0, len(h.wrong))
	hubs := map[string]bool{}
	for t, c := range h.wrong {
		all = append(all, HubTool{Tool: t, Wrong: c, Share: float64(c) / n})
		if float64(c)/n > HubShare {
			hubs[t] = true
		}
	}
	slices.SortFunc(all, func(a, b HubTool) int {
		return cmp.Or(cmp.Compare(b.Wrong, a.Wrong), strings.Compare(a.Tool, b.Tool))
	})
	out.Hubs = len(hubs)
	if len(all) > 0 {
		out.MaxShare = all[0].Share
	}
	out.Worst = all[:min(hubWorst, len(all))]
	with := 0
	for _, top := range h.tops {
		if slices.ContainsFunc(top, func(t string) bool { return hubs[t] }) {
			with++
		}
	}
	out.SearchesWithHub = float64(with) / n
	return out
}

// HubnessTable renders the hubness of reports as Markdown: one row per report with its
// largest share, its number of hubs and the share of searches with a hub, then its three
// worst tools, and the same of other servers' tools alone (Hubness.OtherServers).
func HubnessTable(rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Configuration | Searches | max share | hubs (>%.0f%%) | searches with a hub | worst tools (wrong top %d) | other servers: max share | hubs | searches with a hub | worst tools |\n", HubShare*100, HubK)
	b.WriteString("|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		h := r.Report.Hubness
		o := Hubness{}
		if h.OtherServers != nil {
			o = *h.OtherServers
		}
		fmt.Fprintf(&b, "| %s | %d | %.3f | %d | %.3f | %s | %.3f | %d | %.3f | %s |\n", strings.ReplaceAll(r.Label, "|", `\|`),
			h.Searches, h.MaxShare, h.Hubs, h.SearchesWithHub, worstTools(h), o.MaxShare, o.Hubs, o.SearchesWithHub, worstTools(o))
	}
	return b.String()
}

// worstTools are h's three worst tools with their counts.
func worstTools(h Hubness) string {
	var worst []string
	for _, t := range h.Worst[:min(3, len(h.Worst))] {
		worst = append(worst, fmt.Sprintf("%s (%d)", t.Tool, t.Wrong))
	}
	return strings.Join(worst, ", ")
}
