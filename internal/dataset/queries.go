package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/toolgate/toolgate/internal/eval"
)

// Query kinds of the generated query set.
const (
	KindSingle       = "single"        // one tool of one company
	KindMultiTool    = "multi_tool"    // several tools of one company
	KindMultiCompany = "multi_company" // one function across 2–5 companies
	KindMultiHop     = "multi_hop"     // several functions across several companies
)

// Function names of Templates, for the phrasing tables below.
const (
	fnPrice   = "current_stock_price"
	fnHistory = "stock_price_history"
	fnTargets = "analyst_price_targets"
	fnRevenue = "revenue"
	fnIncome  = "net_income"
)

// DefaultQueryOptions is the mix of the shipped 1,000-company build (testdata/scalemcp-1000):
// about 2,500 queries, most of them single-tool as in the paper's synthetic set.
var DefaultQueryOptions = QueryOptions{Seed: 1, Single: 1500, MultiTool: 400, MultiCompany: 350, MultiHop: 250}

// Build generates a ScaleMCP-style dataset: the catalog of the first n companies and a query
// set over it.
func Build(n int, opts QueryOptions) (*eval.Dataset, error) {
	companies, err := Companies(n)
	if err != nil {
		return nil, err
	}
	return &eval.Dataset{Tools: Tools(companies), Queries: Queries(companies, opts)}, nil
}

// QueryOptions sizes a generated query set. The same options, companies and seed give the
// same queries byte for byte: the generator draws from one PCG stream in a fixed order.
type QueryOptions struct {
	Seed         uint64
	Single       int
	MultiTool    int
	MultiCompany int
	MultiHop     int
}

// singlePhrasings are hand-written questions answered by one tool of one company. {c} is a
// surface form of the company (name, ticker or alias); {year}, {res} and {target} fill the
// tool's arguments.
var singlePhrasings = map[string][]string{
	fnPrice: {
		"What is {c}'s stock price right now?",
		"How much is one share of {c} trading for today?",
		"Give me the latest share price for {c}.",
		"What's {c} trading at?",
		"Current quote for {c}, please.",
		"Where is {c} stock priced at the moment?",
		"I need the most recent trading price of {c}.",
		"How much would it cost to buy a single {c} share right now?",
		"Tell me the live stock price of {c}.",
		"What did {c} last trade at?",
		"Check the current market price of {c} shares.",
		"Is {c} stock up or down today? Show me the current price.",
		"Look up today's price for {c}.",
		"What is the spot price of {c} equity?",
		"Quick one: {c} share price?",
		"Fetch the real-time stock quote for {c}.",
	},
	fnHistory: {
		"Show me {c}'s {res} closing prices over the past year.",
		"How has {c} stock moved over the last twelve months on a {res} basis?",
		"Give me the {res} price history for {c}.",
		"Plot {c}'s stock trend for the past year using {res} closes.",
		"What were {c}'s recent {res} closing prices?",
		"I want to see how {c} shares performed recently, {res} resolution.",
		"Pull the historical stock prices of {c} ({res}).",
		"List the last ten {res} closes for {c}.",
		"How volatile has {c} been? Show the {res} closing price series.",
		"Track {c}'s share price over the past year with {res} data points.",
		"What does the {res} chart of {c} stock look like lately?",
		"Retrieve {c}'s past-year stock performance at {res} granularity.",
		"Has {c} been trending up? Give me its {res} price history.",
		"Historical closing prices for {c}, {res} please.",
		"Show the recent price trajectory of {c} shares, {res}.",
		"Get the {res} stock price series for {c} over the last year.",
	},
	fnTargets: {
		"What is the {target} analyst price target for {c}?",
		"Where do analysts think {c} stock is headed? Give me the {target} target.",
		"What's Wall Street's {target} price forecast for {c}?",
		"Show the {target} analyst target price on {c}.",
		"How much upside do analysts see for {c}? I need the {target} price target.",
		"Tell me the {target} forecasted price for {c} shares.",
		"What price are brokers targeting for {c} ({target})?",
		"Give me the consensus {target} target for {c} stock.",
		"What do sell-side analysts expect {c} to trade at? Use the {target} estimate.",
		"Analyst expectations for {c}: what's the {target} price target?",
		"Fetch the {target} 12-month price target for {c}.",
		"Is {c} undervalued according to analysts? Show me the {target} target price.",
		"Look up the {target} analyst forecast for {c}'s share price.",
		"{c} price target, {target} estimate?",
		"What is the {target} target analysts have set on {c}?",
		"Report the {target} analyst price objective for {c}.",
	},
	fnRevenue: {
		"What was {c}'s total revenue in {year}?",
		"How much revenue did {c} bring in during {year}?",
		"Show me {c}'s sales for fiscal {year}.",
		"What were {c}'s annual revenues in {year}?",
		"Give me the top line of {c} for {year}.",
		"How big was {c}'s revenue in {year}?",
		"Report {c}'s {year} revenue figure.",
		"I need {c}'s total sales numbers for {year}.",
		"What did {c} earn in gross revenue in {year}?",
		"Pull up the yearly revenue history of {c}.",
		"How has {c}'s revenue grown over the years?",
		"Total turnover of {c} in {year}?",
		"Look up {c}'s reported revenue for the {year} fiscal year.",
		"What is the revenue of {c} for every year available?",
		"How much money in sales did {c} generate in {year}?",
		"Fetch {c}'s income statement top line for {year}.",
	},
	fnIncome: {
		"What was {c}'s net income in {year}?",
		"How much profit did {c} make in {year}?",
		"Show me {c}'s bottom line for fiscal {year}.",
		"What were {c}'s net earnings in {year}?",
		"Was {c} profitable in {year}? Give me its net income.",
		"Report {c}'s {year} net profit.",
		"How much did {c} earn after expenses and taxes in {year}?",
		"Give me the net income history of {c}.",
		"I need {c}'s annual net income figures.",
		"What is {c}'s net income across all available years?",
		"Look up the {year} net earnings of {c}.",
		"How did {c}'s profits look in {year}?",
		"Fetch the bottom-line result of {c} for {year}.",
		"What did {c} report as net income for the {year} fiscal year?",
		"Did {c} post a loss or a profit in {year}? Show net income.",
		"Net profit of {c} in {year}, please.",
	},
}

// multiToolPhrasings ask several questions about one company ({c}).
var multiToolPhrasings = []struct {
	functions []string
	text      string
}{
	{[]string{fnRevenue, fnIncome}, "Can you detail a year-over-year comparison of {c}'s financial metrics by looking at its {yearprev} and {year} revenue and net income?"},
	{[]string{fnRevenue, fnIncome}, "What were {c}'s revenue and net income in {year}, and what was its profit margin?"},
	{[]string{fnPrice, fnTargets}, "How does {c}'s current stock price compare with the {target} analyst price target?"},
	{[]string{fnPrice, fnHistory}, "Give me {c}'s current share price and its {res} price history for the past year."},
	{[]string{fnHistory, fnTargets}, "Has {c} been trending toward analysts' {target} target? Show the {res} price history and the target."},
	{[]string{fnPrice, fnHistory, fnTargets}, "Analyze {c} stock: current price, recent {res} price history and the {target} analyst price target."},
	{[]string{fnRevenue, fnIncome, fnPrice}, "Is {c} fairly valued? I need its current stock price plus its {year} revenue and net income."},
	{[]string{fnIncome, fnTargets}, "Given {c}'s {year} net income, do analysts' {target} price targets look justified?"},
	{[]string{fnRevenue, fnTargets}, "Show {c}'s revenue growth through {year} alongside the {target} analyst price target."},
	{[]string{fnPrice, fnRevenue}, "What's {c} trading at today, and how much revenue did it make in {year}?"},
	{[]string{fnHistory, fnIncome}, "Did {c}'s {year} net income move the stock? Show net income and the {res} price history."},
	{[]string{fnPrice, fnHistory, fnTargets, fnRevenue, fnIncome}, "Build me a full financial snapshot of {c}: current price, {res} price history, {target} analyst target, {year} revenue and net income."},
}

// multiCompanyPhrasings ask one question about several companies ({list}).
var multiCompanyPhrasings = []struct {
	function string
	text     string
}{
	{fnRevenue, "Compare the {year} revenue of {list}, and determine which company achieved the highest revenue."},
	{fnRevenue, "Which of {list} had the largest sales in {year}?"},
	{fnRevenue, "Rank {list} by total revenue for {year}."},
	{fnIncome, "Determine the relative financial strength of {list} by comparing their {year} net income."},
	{fnIncome, "Which company was most profitable in {year}: {list}?"},
	{fnIncome, "Show the net income of {list} side by side for {year}."},
	{fnPrice, "What are the current stock prices of {list}?"},
	{fnPrice, "Quote me today's share prices for {list}."},
	{fnPrice, "Which is the most expensive stock per share right now among {list}?"},
	{fnHistory, "How did {list} perform over the past year? Compare their {res} closing prices."},
	{fnHistory, "Chart the {res} price histories of {list} against each other."},
	{fnTargets, "Compare the {target} analyst price targets for {list}."},
	{fnTargets, "Which of {list} do analysts rate most bullishly, based on {target} price targets?"},
	{fnRevenue, "Out of the following companies: {list}, determine which one reported the highest revenue for {year}."},
}

// multiHopPhrasings combine several functions across several companies ({list}).
var multiHopPhrasings = []struct {
	functions []string
	text      string
}{
	{[]string{fnPrice, fnHistory, fnTargets}, "Analyze the stock performance of {list} by reviewing each company's current stock price, recent {res} price history, and {target} analyst price targets to determine the best overall performer."},
	{[]string{fnHistory, fnTargets}, "How do {list} compare in terms of stock performance and analyst expectations over the past year?"},
	{[]string{fnRevenue, fnIncome}, "Compare the {year} revenue and net income of {list} and tell me which had the best margin."},
	{[]string{fnPrice, fnTargets}, "Which of {list} trades furthest below its {target} analyst price target today?"},
	{[]string{fnPrice, fnRevenue}, "Relate the current share prices of {list} to their {year} revenue."},
	{[]string{fnIncome, fnPrice}, "Using {year} net income and today's stock price, which of {list} looks cheapest?"},
	{[]string{fnRevenue, fnHistory}, "Did revenue growth in {year} translate into stock gains for {list}? Use revenue and {res} price history."},
	{[]string{fnRevenue, fnIncome, fnTargets}, "For {list}, compare {year} revenue, net income and the {target} analyst price target."},
	{[]string{fnPrice, fnHistory}, "Where do {list} trade now compared with their {res} closes over the last year?"},
	{[]string{fnIncome, fnTargets}, "Are analysts' {target} targets for {list} consistent with their {year} profits?"},
	{[]string{fnPrice, fnRevenue, fnIncome}, "Screen {list}: current price, {year} revenue and {year} net income for each."},
}

// Queries generates a ScaleMCP-style query set over companies (seed 000, appendix A8 and
// "Multi-Company Synthetic Queries"): single-tool questions spread evenly over the five
// functions, and multi-tool, multi-company and multi-hop questions, each labelled with
// its kind and the names of every tool needed to answer it.
func Queries(companies []Company, opts QueryOptions) []eval.Query {
	g := &generator{rng: rand.New(rand.NewPCG(opts.Seed, 0x746f6f6c67617465)), companies: companies}
	var out []eval.Query
	n := map[string]int{}
	add := func(kind, text string, gold []string) {
		n[kind]++
		out = append(out, eval.Query{ID: fmt.Sprintf("%s-%04d", kind, n[kind]), Query: text, Gold: gold, Kind: kind})
	}
	for i := range opts.Single {
		fn := Templates[i%len(Templates)].Function
		c := g.company()
		add(KindSingle, g.fill(g.pick(singlePhrasings[fn]), c, nil), []string{ToolName(c, fn)})
	}
	for range opts.MultiTool {
		p := multiToolPhrasings[g.rng.IntN(len(multiToolPhrasings))]
		c := g.company()
		add(KindMultiTool, g.fill(p.text, c, nil), gold([]Company{c}, p.functions))
	}
	for range opts.MultiCompany {
		p := multiCompanyPhrasings[g.rng.IntN(len(multiCompanyPhrasings))]
		cs := g.distinct(2 + g.rng.IntN(4))
		add(KindMultiCompany, g.fill(p.text, Company{}, cs), gold(cs, []string{p.function}))
	}
	for range opts.MultiHop {
		p := multiHopPhrasings[g.rng.IntN(len(multiHopPhrasings))]
		cs := g.distinct(2 + g.rng.IntN(2))
		add(KindMultiHop, g.fill(p.text, Company{}, cs), gold(cs, p.functions))
	}
	return out
}

// gold lists the tools of every company for every function, company by company.
func gold(cs []Company, functions []string) []string {
	var out []string
	for _, c := range cs {
		for _, fn := range functions {
			out = append(out, ToolName(c, fn))
		}
	}
	return out
}

type generator struct {
	rng       *rand.Rand
	companies []Company
}

func (g *generator) pick(options []string) string { return options[g.rng.IntN(len(options))] }

func (g *generator) company() Company { return g.companies[g.rng.IntN(len(g.companies))] }

// distinct draws n different companies (fewer if the list is shorter).
func (g *generator) distinct(n int) []Company {
	n = min(n, len(g.companies))
	seen := map[int]bool{}
	out := make([]Company, 0, n)
	for len(out) < n {
		i := g.rng.IntN(len(g.companies))
		if !seen[i] {
			seen[i] = true
			out = append(out, g.companies[i])
		}
	}
	return out
}

// surface names a company the way users do: by name most often, else by ticker (bare or
// with a $) or by one of its aliases.
func (g *generator) surface(c Company) string {
	switch r := g.rng.IntN(10); {
	case r < 5 || (r >= 8 && len(c.Aliases) == 0):
		return c.Name
	case r < 7:
		return c.Ticker
	case r < 8:
		return "$" + c.Ticker
	default:
		return c.Aliases[g.rng.IntN(len(c.Aliases))]
	}
}

// fill replaces the placeholders of a phrasing: {c} with a surface form of c, {list} with
// surface forms of cs, and the argument placeholders with plausible values.
func (g *generator) fill(text string, c Company, cs []Company) string {
	year := 2020 + g.rng.IntN(5)
	r := strings.NewReplacer(
		"{yearprev}", fmt.Sprint(year-1),
		"{year}", fmt.Sprint(year),
		"{res}", g.pick([]string{"daily", "weekly", "monthly"}),
		"{target}", g.pick([]string{"current", "low", "high", "mean", "median"}),
	)
	text = r.Replace(text)
	if strings.Contains(text, "{c}") {
		text = strings.ReplaceAll(text, "{c}", g.surface(c))
	}
	if strings.Contains(text, "{list}") {
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = g.surface(c)
		}
		text = strings.ReplaceAll(text, "{list}", joinList(names))
	}
	return text
}

// joinList writes "A", "A and B", "A, B, and C".
func joinList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + ", and " + names[len(names)-1]
}
