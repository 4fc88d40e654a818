package dataset

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed companies.txt
var companiesTxt string

// MaxCompanies is the length of the full company list: DemoCompanies followed by the
// companies of companies.txt.
func MaxCompanies() int { return len(allCompanies()) }

// Companies returns the first n companies of the full list (the 60 demo companies first),
// or an error when n is out of range.
func Companies(n int) ([]Company, error) {
	all := allCompanies()
	if n < 1 || n > len(all) {
		return nil, fmt.Errorf("companies: want 1 to %d, got %d", len(all), n)
	}
	return all[:n], nil
}

func allCompanies() []Company {
	out := append([]Company(nil), DemoCompanies...)
	for line := range strings.SplitSeq(companiesTxt, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		c := Company{Name: fields[0], Ticker: fields[1]}
		if len(fields) > 2 && fields[2] != "" {
			c.Aliases = strings.Split(fields[2], ";")
		}
		out = append(out, c)
	}
	return out
}
