package console_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleJobsFollowTheQueue: while jobs wait or run, the Jobs page reads the queue
// again by itself: a job cancelled elsewhere leaves its list without a reload.
func TestConsoleJobsFollowTheQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	var r struct {
		JobID int64 `json:"job_id"`
	}
	st.post(t, "/admin/profiles/var-1/reweight", ``, &r)
	b := newBrowser(t)
	b.open(st.url+"/ui/jobs?state=available", fmt.Sprintf(`button.cancel[data-job="%d"]`, r.JobID))
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))

	st.post(t, fmt.Sprintf("/admin/jobs/%d/cancel", r.JobID), ``, nil)
	// the cancelled job leaves the list of available ones (others, the stack's periodic
	// jobs, may stay in it)
	b.do("wait for the job to leave the list", chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`#job-list tr button.cancel[data-job="%d"]`, r.JobID))))
	b.wait(`//div[@id="job-summary"]//a[@href="/ui/jobs?kind=reweight&state=cancelled"]`)
	if !eval[bool](b, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	var state string
	if err := st.pool.QueryRow(context.Background(), `SELECT state FROM river_job WHERE id = $1`, r.JobID).Scan(&state); err != nil || state != "cancelled" {
		t.Errorf("job %d: %q %v", r.JobID, state, err)
	}
}
