package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestJobTimeoutsAndRescue(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.EnrichTimeout != 5*time.Minute || c.ReweightTimeout != 10*time.Minute || c.JobTimeout != time.Minute || c.RescueAfter != 0 {
		t.Fatalf("defaults: enrich %v, reweight %v, job %v, rescue %v", c.EnrichTimeout, c.ReweightTimeout, c.JobTimeout, c.RescueAfter)
	}

	// A rescue threshold above every timeout is kept, down to seconds for tests.
	for _, kv := range []map[string]string{
		{"TOOLGATE_RESCUE_AFTER": "15m"},
		{"TOOLGATE_RESCUE_AFTER": "8s", "TOOLGATE_ENRICH_TIMEOUT": "5s", "TOOLGATE_REWEIGHT_TIMEOUT": "5s",
			"TOOLGATE_SYNC_TIMEOUT": "5s", "TOOLGATE_JOB_TIMEOUT": "2s"},
	} {
		c, err := Load(env(kv))
		if err != nil {
			t.Errorf("%v: %v", kv, err)
			continue
		}
		if want, _ := time.ParseDuration(kv["TOOLGATE_RESCUE_AFTER"]); c.RescueAfter != want {
			t.Errorf("%v: rescue after %v", kv, c.RescueAfter)
		}
	}

	// At or below a job's timeout, it is refused with the job and the setting to change.
	cases := []struct {
		env  map[string]string
		want []string
	}{
		// equal to the re-weight's default attempt timeout
		{map[string]string{"TOOLGATE_RESCUE_AFTER": "10m"}, []string{"reweight", "10m0s", "TOOLGATE_REWEIGHT_TIMEOUT"}},
		{map[string]string{"TOOLGATE_RESCUE_AFTER": "20m", "TOOLGATE_ENRICH_TIMEOUT": "30m"}, []string{"enrich_tool", "30m0s", "TOOLGATE_ENRICH_TIMEOUT"}},
		// a sync job lasts its listing plus applying the diff: 20m + 1m
		{map[string]string{"TOOLGATE_RESCUE_AFTER": "20m30s", "TOOLGATE_SYNC_TIMEOUT": "20m"}, []string{"sync_source", "21m0s", "TOOLGATE_SYNC_TIMEOUT + TOOLGATE_JOB_TIMEOUT"}},
		{map[string]string{"TOOLGATE_RESCUE_AFTER": "8s", "TOOLGATE_ENRICH_TIMEOUT": "5s", "TOOLGATE_REWEIGHT_TIMEOUT": "5s",
			"TOOLGATE_SYNC_TIMEOUT": "5s", "TOOLGATE_JOB_TIMEOUT": "3s"}, []string{"sync_source", "8s"}},
	}
	for _, tc := range cases {
		_, err := Load(env(tc.env))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != "TOOLGATE_RESCUE_AFTER" {
			t.Errorf("%v: got %v, want an error naming TOOLGATE_RESCUE_AFTER", tc.env, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(ce.Reason, w) {
				t.Errorf("%v: %q does not say %q", tc.env, err, w)
			}
		}
	}

	// Each timeout must be a positive duration.
	for _, setting := range []string{"TOOLGATE_ENRICH_TIMEOUT", "TOOLGATE_REWEIGHT_TIMEOUT", "TOOLGATE_JOB_TIMEOUT", "TOOLGATE_RESCUE_AFTER"} {
		_, err := Load(env(map[string]string{setting: "0s"}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%s=0s: got %v", setting, err)
		}
	}
}
