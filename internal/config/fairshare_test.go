package config

import (
	"testing"

	"github.com/toolgate/toolgate/api"
)

// TestFairShareSettings: a key's share of searches and the control pool are read from their
// settings, the share's default is the API's own, and values out of range are refused.
func TestFairShareSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.KeySearchUnits != api.DefaultKeySearchUnits || c.DBControlConns != 2 {
		t.Fatalf("defaults: units %d, control conns %d", c.KeySearchUnits, c.DBControlConns)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_KEY_SEARCH_UNITS": "16", "TOOLGATE_DB_CONTROL_CONNS": "3"}))
	if err != nil || c.KeySearchUnits != 16 || c.DBControlConns != 3 {
		t.Fatalf("got %+v, %v", c, err)
	}
	for name, v := range map[string]string{"TOOLGATE_KEY_SEARCH_UNITS": "0", "TOOLGATE_DB_CONTROL_CONNS": "0"} {
		if _, err := Load(env(map[string]string{name: v})); err == nil {
			t.Errorf("%s=%s accepted", name, v)
		}
	}
}
