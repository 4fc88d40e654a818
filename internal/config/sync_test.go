package config

import (
	"errors"
	"testing"
	"time"
)

func TestSyncTimeout(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || c.SyncTimeout != time.Minute {
		t.Fatalf("default: %v %v", c.SyncTimeout, err)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_SYNC_TIMEOUT": "15s"}))
	if err != nil || c.SyncTimeout != 15*time.Second {
		t.Fatalf("15s: %v %v", c.SyncTimeout, err)
	}
	_, err = Load(env(map[string]string{"TOOLGATE_SYNC_TIMEOUT": "0s"}))
	var ce *Error
	if !errors.As(err, &ce) || ce.Setting != "TOOLGATE_SYNC_TIMEOUT" {
		t.Fatalf("0s: %v", err)
	}
}
