package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "4897f80c1a2b3c4d5e6f708192a3b4c5d6e7f809"
	const at = "2026-11-26T19:43:13Z"
	stamped := Info{Version: "0.9.0", Commit: "be58e63a0f1d", Date: "2026-11-27T08:00:00Z"}
	vcs := settings("vcs.revision", rev, "vcs.time", at, "vcs.modified", "false")
	for _, tc := range []struct {
		name    string
		stamped Info
		info    *debug.BuildInfo
		want    Info
	}{
		{"nothing at all", Info{}, nil, Info{Version: "devel"}},
		{"a plain go build outside a checkout", Info{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Info{Version: "devel"}},
		{"a plain go build in a checkout", Info{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Info{Version: "devel", Commit: "4897f80c1a2b", Date: at}},
		{"a plain go build of a changed tree", Info{}, &debug.BuildInfo{Settings: settings("vcs.revision", rev, "vcs.modified", "true")},
			Info{Version: "devel", Commit: "4897f80c1a2b-dirty"}},
		{"go install of a tagged module", Info{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.9.1"}},
			Info{Version: "v0.9.1"}},
		{"stamped: the linker's values win", stamped, &debug.BuildInfo{Main: debug.Module{Version: "v0.9.1"}, Settings: vcs}, stamped},
		{"stamped without a commit (image built without .git or build args)", Info{Version: "0.9.0", Date: "2026-11-27T08:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			Info{Version: "0.9.0", Date: "2026-11-27T08:00:00Z"}},
	} {
		if got := resolve(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: resolve = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Version: "devel"}, "devel"},
		{Info{Version: "0.9.0", Commit: "4897f80c1a2b", Date: "2026-11-26T19:43:13Z"}, "0.9.0 (commit 4897f80c1a2b, 2026-11-26T19:43:13Z)"},
		{Info{Version: "0.9.0", Date: "2026-11-26T19:43:13Z"}, "0.9.0 (2026-11-26T19:43:13Z)"},
		{Info{Version: "devel", Commit: "4897f80c1a2b-dirty"}, "devel (commit 4897f80c1a2b-dirty)"},
	} {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.info, got, tc.want)
		}
	}
}
