package config

import (
	"errors"
	"testing"
)

func TestOpsSettings(t *testing.T) {
	c, err := Load(env(map[string]string{
		"TOOLGATE_DB_MAX_CONNS":       "20",
		"TOOLGATE_RIVER_POLL_ONLY":    "true",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DBMaxConns != 20 || !c.RiverPollOnly || c.OTLPEndpoint != "http://collector:4318" {
		t.Fatalf("got %+v", c)
	}
	// toolgate's own variable wins over the OpenTelemetry one.
	c, err = Load(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "TOOLGATE_OTLP_ENDPOINT": "http://b:4318"}))
	if err != nil || c.OTLPEndpoint != "http://b:4318" {
		t.Fatalf("got %q, %v; want http://b:4318", c.OTLPEndpoint, err)
	}
	c, err = Load(env(map[string]string{"DATABASE_READ_URL": "postgres://reader:pw@replica:5432/toolgate"}))
	if err != nil || c.DatabaseReadURL != "postgres://reader:pw@replica:5432/toolgate" {
		t.Fatalf("DATABASE_READ_URL: got %q, %v", c.DatabaseReadURL, err)
	}
	c, err = Load(env(nil))
	if err != nil || c.DBMaxConns != 0 || c.RiverPollOnly || c.OTLPEndpoint != "" || c.DatabaseReadURL != "" {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
}

func TestBadOpsSettingNamesIt(t *testing.T) {
	cases := map[string]map[string]string{
		"DATABASE_READ_URL":        {"DATABASE_READ_URL": "mysql://reader@replica/toolgate"},
		"TOOLGATE_DB_MAX_CONNS":    {"TOOLGATE_DB_MAX_CONNS": "-1"},
		"TOOLGATE_RIVER_POLL_ONLY": {"TOOLGATE_RIVER_POLL_ONLY": "sometimes"},
		"TOOLGATE_OTLP_ENDPOINT":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
	}
	for setting, kv := range cases {
		_, err := Load(env(kv))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%v: got %v, want an error naming %s", kv, err, setting)
		}
	}
}
