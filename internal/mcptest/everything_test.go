package mcptest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envProbe makes TestEverythingServerProbe call EverythingServer; the test binary is run
// with it, outside the module, by TestEverythingServerAbsent.
const envProbe = "TOOLGATE_MCPTEST_EVERYTHING_PROBE"

func TestEverythingServerProbe(t *testing.T) {
	if os.Getenv(envProbe) == "" {
		return
	}
	EverythingServer(t)
}

// TestEverythingServerAbsent runs the probe where the server cannot be found: the test
// skips, naming the command that installs the server, unless RequireNPMEnv is set, when
// it fails.
func TestEverythingServerAbsent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		require string
		fails   bool
		verdict string
	}{
		{"", false, "--- SKIP: TestEverythingServerProbe"},
		{"1", true, "--- FAIL: TestEverythingServerProbe"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEverythingServerProbe$", "-test.v")
		cmd.Dir = t.TempDir() // no go.mod above: the server is absent
		cmd.Env = append(os.Environ(), envProbe+"=1", RequireNPMEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if failed := errors.As(err, &exit); failed != tc.fails || (err != nil && !failed) {
			t.Fatalf("%s=%q: exit %v, want failed=%v\n%s", RequireNPMEnv, tc.require, err, tc.fails, out)
		}
		if !strings.Contains(string(out), tc.verdict) || !strings.Contains(string(out), "`make test` (scripts/test.sh) installs it") {
			t.Errorf("%s=%q: want %q and the install command in the output:\n%s", RequireNPMEnv, tc.require, tc.verdict, out)
		}
	}
}

func TestEverythingServerFound(t *testing.T) {
	path := EverythingServer(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
