// Package version says which build of toolgate is running: the version, the commit and the
// build date that `toolgate version` prints and the MCP gateway reports as serverInfo.version.
//
// Builds made the documented way (make build, make run, the Dockerfile) are stamped by the
// linker through scripts/ldflags.sh:
//
//	go build -ldflags "-X github.com/toolgate/toolgate/internal/version.version=0.9.0 \
//	  -X github.com/toolgate/toolgate/internal/version.commit=4897f80c1a2b \
//	  -X github.com/toolgate/toolgate/internal/version.date=2026-11-26T19:43:13Z" ./cmd/toolgate
//
// A build without them (go install, a plain go build) falls back to what the Go toolchain
// recorded in the binary (the module version, vcs.revision, vcs.time), then to "devel".
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set by the linker (-X); empty in a build that does not stamp them.
var (
	version string
	commit  string
	date    string
)

// Devel is the version of a build that carries none.
const Devel = "devel"

// Info is what a build says about itself. Commit and Date are empty when unknown.
type Info struct {
	Version string // "0.9.0", "0.9.0-3-g4897f80c1a2b-dirty", "v0.9.1" (go install), or "devel"
	Commit  string // the commit, abbreviated to 12 digits, "-dirty" when the tree had changes
	Date    string // RFC 3339: when it was built when stamped, else when its commit was made (vcs.time)
}

// Get returns the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Info{Version: version, Commit: commit, Date: date}, bi)
}

// resolve fills what the linker did not stamp from the build information Go records
// (nil when there is none).
func resolve(stamped Info, bi *debug.BuildInfo) Info {
	out := stamped
	if bi != nil {
		if out.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			out.Version = bi.Main.Version
		}
		var rev, at string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if out.Commit == "" && rev != "" {
			out.Commit = abbrev(rev)
			if modified {
				out.Commit += "-dirty"
			}
		}
		if out.Date == "" {
			out.Date = at
		}
	}
	if out.Version == "" {
		out.Version = Devel
	}
	return out
}

// abbrev shortens a commit hash to the 12 digits git describe and Go's pseudo-versions use.
func abbrev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// String is the one line `toolgate version` prints after "toolgate ":
// "0.9.0 (commit 4897f80c1a2b, 2026-11-26T19:43:13Z)", the parenthesis naming only what is
// known.
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		parts = append(parts, "commit "+i.Commit)
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	if len(parts) == 0 {
		return i.Version
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}
