package dataset

// Aliases is the vocabulary of companies for the heuristic query planner (plan.NewHeuristic):
// every name, ticker and alias mapped to the company's name.
func Aliases(cs []Company) map[string]string {
	m := make(map[string]string, 3*len(cs))
	for _, c := range cs {
		m[c.Name] = c.Name
		m[c.Ticker] = c.Name
		for _, a := range c.Aliases {
			m[a] = c.Name
		}
	}
	return m
}
