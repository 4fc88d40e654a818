package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// experimentTraffic sends n searches to the running experiment, each in its own session,
// and reports the first result as used for those of arm labelled when keep(i) is true:
// traffic that makes one arm look better than the other.
func (st *stack) experimentTraffic(t *testing.T, n int, labelled string, keep func(i int) bool) {
	t.Helper()
	for i := range n {
		var resp struct {
			SearchID   int64 `json:"search_id"`
			Experiment *struct {
				Arm string `json:"arm"`
			} `json:"experiment"`
			Results []struct {
				Name string `json:"name"`
			} `json:"results"`
		}
		st.post(t, "/search", fmt.Sprintf(`{"query":"weather in Paris","session_id":"%s-%d"}`, labelled, i), &resp)
		if resp.Experiment == nil {
			t.Fatal("a search outside the running experiment")
		}
		if resp.Experiment.Arm == labelled && keep(i) && len(resp.Results) > 0 {
			st.post(t, fmt.Sprintf("/search/%d/feedback", resp.SearchID),
				fmt.Sprintf(`{"tools":[{"name":%q,"success":true}]}`, resp.Results[0].Name), nil)
		}
	}
}

// TestConsoleExperimentVerdict: an experiment's page says in words what its report shows
// (candidate better, worse, or no difference yet, from the interval of the difference in
// MRR over all searches), how many searches a verdict would need, and offers to activate
// a candidate that won, after a confirmation.
func TestConsoleExperimentVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	ctx := context.Background()
	b := newBrowser(t)

	// No search yet: no verdict.
	st.post(t, "/admin/experiments", `{"name":"var1-better","candidate":"var-1","share":0.5}`, nil)
	b.open(st.url+"/ui/experiments/var1-better", "#verdict")
	if got := b.text("#verdict .verdict-text"); !strings.HasPrefix(got, "No verdict yet") {
		t.Errorf("verdict without searches: %q", got)
	}

	// The candidate's searches are labelled two times in three, the control's never.
	st.experimentTraffic(t, 40, "candidate", func(i int) bool { return i%3 != 0 })
	b.open(st.url+"/ui/experiments/var1-better", "#verdict")
	if got := b.text("#verdict .verdict-text"); !strings.HasPrefix(got, "Candidate better: var-1's MRR over all searches is +") {
		t.Errorf("verdict of a better candidate: %q", got)
	}
	if got := b.text("#sample-size"); !strings.HasPrefix(got, "40 counted searches so far (") || !strings.Contains(got, "needs about") {
		t.Errorf("sample size of a clear difference: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('#experiment table.arms tbody tr').length`); n != 2 {
		t.Errorf("%d arms shown under the verdict, want 2", n)
	}
	b.shot("experiment-verdict")
	b.click(`button.activate-winner[data-profile="var-1"]`)
	b.wait(`//span[@class="question"][contains(., "Make var-1 the profile every search uses (the experiment keeps running until stopped)?")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="status"]/div[contains(., "var-1 is the active profile.")]`)
	var active string
	if err := st.pool.QueryRow(ctx, `SELECT name FROM weight_profiles WHERE is_active`).Scan(&active); err != nil || active != "var-1" {
		t.Errorf("active profile after activating the winner: %q %v", active, err)
	}
	st.post(t, "/admin/experiments/var1-better/stop", ``, nil)

	// The control's searches are labelled, the candidate's seldom: worse, nothing to activate.
	st.post(t, "/admin/experiments", `{"name":"var2-worse","candidate":"var-2","control":"var-1","share":0.5}`, nil)
	st.experimentTraffic(t, 40, "control", func(int) bool { return true })
	b.open(st.url+"/ui/experiments/var2-worse", "#verdict")
	if got := b.text("#verdict .verdict-text"); !strings.HasPrefix(got, "Candidate worse: var-2's MRR over all searches is -") {
		t.Errorf("verdict of a worse candidate: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('button.activate-winner').length`); n != 0 {
		t.Error("a worse candidate is offered for activation")
	}
}
