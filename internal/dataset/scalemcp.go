// Package dataset builds the ScaleMCP-style financial tool catalog (seed 000, appendix A9):
// five deterministic tools per company, named get_{company}_{function}.
package dataset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/catalog"
)

// Company is one company of the catalog, with the surface forms queries may use.
type Company struct {
	Name    string   `json:"name"`
	Ticker  string   `json:"ticker"`
	Aliases []string `json:"aliases,omitempty"`
}

// Template is one of the five ScaleMCP tool functions.
type Template struct {
	Function    string // e.g. current_stock_price
	Description string // with a {company} placeholder
	Schema      string // JSON Schema of the arguments
}

// Templates are the five tool functions of ScaleMCP table A9.
var Templates = []Template{
	{
		Function:    "current_stock_price",
		Description: "Return the most recent trading price for {company}'s stock, or -1 if unavailable.",
		Schema:      `{"type":"object","properties":{}}`,
	},
	{
		Function:    "stock_price_history",
		Description: "Retrieve the closing stock prices for {company} over the past year with a daily, weekly, or monthly resolution. Returns the last 10 values.",
		Schema:      `{"type":"object","properties":{"timeline":{"type":"string","enum":["d","w","m"],"description":"Resolution of the history: d (daily), w (weekly) or m (monthly)."}},"required":["timeline"]}`,
	},
	{
		Function:    "analyst_price_targets",
		Description: "Fetch a specific analyst price target for {company}, such as current, high, low, mean, or median forecasted price.",
		Schema:      `{"type":"object","properties":{"target_type":{"type":"string","enum":["current","low","high","mean","median"],"description":"Which analyst price target to return."}},"required":["target_type"]}`,
	},
	{
		Function:    "revenue",
		Description: "Get {company}'s total revenue by year. If no year is provided, returns all available revenue data.",
		Schema:      `{"type":"object","properties":{"year":{"type":"integer","description":"Fiscal year; all years when omitted."}}}`,
	},
	{
		Function:    "net_income",
		Description: "Get {company}'s net income by year. If no year is specified, returns all available net income data.",
		Schema:      `{"type":"object","properties":{"year":{"type":"integer","description":"Fiscal year; all years when omitted."}}}`,
	},
}

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

// Slug is the identifier form of a company name used in tool names ("Johnson & Johnson" →
// "johnson_johnson").
func Slug(name string) string {
	return strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(name), "_"), "_")
}

// ToolName is the name of a company's tool for a template function.
func ToolName(c Company, function string) string {
	return fmt.Sprintf("get_%s_%s", Slug(c.Name), function)
}

// Tools builds the catalog for companies: five tools per company.
func Tools(companies []Company) []catalog.Tool {
	out := make([]catalog.Tool, 0, len(companies)*len(Templates))
	for _, c := range companies {
		for _, t := range Templates {
			out = append(out, catalog.Tool{
				Name:        ToolName(c, t.Function),
				Description: strings.ReplaceAll(t.Description, "{company}", c.Name),
				InputSchema: json.RawMessage(t.Schema),
			})
		}
	}
	return out
}
