package dataset

import "testing"

func TestToolsAreValidAndUnique(t *testing.T) {
	tools := Tools(DemoCompanies)
	if len(tools) != 5*len(DemoCompanies) {
		t.Fatalf("got %d tools, want %d", len(tools), 5*len(DemoCompanies))
	}
	seen := map[string]bool{}
	for i := range tools {
		if err := tools[i].Validate(); err != nil {
			t.Fatal(err)
		}
		if seen[tools[i].Name] {
			t.Fatalf("duplicate tool %s", tools[i].Name)
		}
		seen[tools[i].Name] = true
	}
	if got := ToolName(Company{Name: "Johnson & Johnson"}, "revenue"); got != "get_johnson_johnson_revenue" {
		t.Fatalf("ToolName = %q", got)
	}
}
