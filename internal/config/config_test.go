package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != DefaultDatabaseURL || c.ListenAddr != ":8080" || c.Role != RoleAll || !c.AutoMigrate || c.Open {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestBadSettingNamesIt(t *testing.T) {
	cases := map[string]map[string]string{
		"LISTEN_ADDR":                   {"LISTEN_ADDR": "8080"},
		"TOOLGATE_ROLE":                 {"TOOLGATE_ROLE": "both"},
		"TOOLGATE_WORKERS":              {"TOOLGATE_WORKERS": "zero"},
		"TOOLGATE_SHUTDOWN_TIMEOUT":     {"TOOLGATE_SHUTDOWN_TIMEOUT": "soon"},
		"DATABASE_URL":                  {"DATABASE_URL": "mysql://x"},
		"TOOLGATE_AUTO_MIGRATE":         {"TOOLGATE_AUTO_MIGRATE": "maybe"},
		"TOOLGATE_LOG_LEVEL":            {"TOOLGATE_LOG_LEVEL": "loud"},
		"TOOLGATE_SEARCH_LOG_RETENTION": {"TOOLGATE_SEARCH_LOG_RETENTION": "1h"},
		"TOOLGATE_OPEN":                 {"TOOLGATE_OPEN": "yes please"},
		"TOOLGATE_MEMORY_LISTS_FROM":    {"TOOLGATE_MEMORY_LISTS_FROM": "-1"},
	}
	for setting, kv := range cases {
		_, err := Load(env(kv))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%v: got %v, want an error naming %s", kv, err, setting)
		}
	}
}

func TestDurationInDays(t *testing.T) {
	c, err := Load(env(map[string]string{"TOOLGATE_SEARCH_LOG_RETENTION": "30d"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SearchLogKeep != 30*24*time.Hour {
		t.Fatalf("got %v", c.SearchLogKeep)
	}
}

func TestOpenMode(t *testing.T) {
	c, err := Load(env(map[string]string{"TOOLGATE_OPEN": "1"}))
	if err != nil || !c.Open {
		t.Fatalf("TOOLGATE_OPEN=1: Open=%v err=%v", c.Open, err)
	}
}

// TestOpenModeListensOnLoopback: open mode (every caller admin) serves loopback only unless
// TOOLGATE_OPEN_REMOTE says otherwise: the default ":8080" becomes 127.0.0.1:8080, and an
// address of another interface is a setting error.
func TestOpenModeListensOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // the address served; "" for a LISTEN_ADDR error
	}{
		{map[string]string{"TOOLGATE_OPEN": "true"}, "127.0.0.1:8080"},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": ":9000"}, "127.0.0.1:9000"},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "localhost:9000"}, "localhost:9000"},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "[::1]:9000"}, "[::1]:9000"},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "0.0.0.0:8080"}, ""},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "[::]:8080"}, ""},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "10.1.2.3:8080"}, ""},
		{map[string]string{"TOOLGATE_OPEN": "true", "LISTEN_ADDR": "0.0.0.0:8080", "TOOLGATE_OPEN_REMOTE": "true"}, "0.0.0.0:8080"},
		{map[string]string{"TOOLGATE_OPEN": "true", "TOOLGATE_OPEN_REMOTE": "true"}, ":8080"},
		{map[string]string{"LISTEN_ADDR": "0.0.0.0:8080"}, "0.0.0.0:8080"}, // keys protect it
		{nil, ":8080"},
	} {
		c, err := Load(env(tc.env))
		var ce *Error
		switch {
		case tc.want == "" && (!errors.As(err, &ce) || ce.Setting != "LISTEN_ADDR" || !strings.Contains(ce.Reason, "TOOLGATE_OPEN_REMOTE")):
			t.Errorf("%v: %v, want a LISTEN_ADDR error naming TOOLGATE_OPEN_REMOTE", tc.env, err)
		case tc.want != "" && (err != nil || c.ServeAddr() != tc.want):
			t.Errorf("%v: serves %q (%v), want %q", tc.env, c.ServeAddr(), err, tc.want)
		}
	}
}

func TestRedactHidesPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:s3cret@h:5432/db":  "postgres://u:xxxxx@h:5432/db",
		"postgres://u@h/db":              "postgres://u@h/db",
		"host=db user=u password=s3cret": "<not shown: not a URL>",
		"postgres://u:pa%zz@h/db":        "<not shown: not a URL>",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStdioCommands(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || c.StdioCommands != nil {
		t.Fatalf("unset: %v %v", c.StdioCommands, err)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_STDIO_COMMANDS": " npx  -y @modelcontextprotocol/server-everything , /opt/mcp/git-server,, "}))
	want := [][]string{{"npx", "-y", "@modelcontextprotocol/server-everything"}, {"/opt/mcp/git-server"}}
	if err != nil || !reflect.DeepEqual(c.StdioCommands, want) {
		t.Fatalf("got %q %v, want %q", c.StdioCommands, err, want)
	}
}

// An entry's env= word lists the variables a source running it may set; names that change
// what a command runs cannot be listed, and a listing limit is read with its bounds.
func TestStdioCommandEnvAndListLimits(t *testing.T) {
	c, err := Load(env(map[string]string{
		"TOOLGATE_STDIO_COMMANDS":       "npx -y @modelcontextprotocol/server-everything env=API_KEY:LOG_LEVEL,/opt/git",
		"TOOLGATE_MAX_TOOLS_PER_SOURCE": "500", "TOOLGATE_MAX_LIST_BYTES": "1048576",
	}))
	want := [][]string{{"npx", "-y", "@modelcontextprotocol/server-everything", "env=API_KEY:LOG_LEVEL"}, {"/opt/git"}}
	if err != nil || !reflect.DeepEqual(c.StdioCommands, want) || c.MaxToolsPerSrc != 500 || c.MaxListBytes != 1<<20 {
		t.Fatalf("got %q %d %d %v", c.StdioCommands, c.MaxToolsPerSrc, c.MaxListBytes, err)
	}
	if c, err := Load(env(nil)); err != nil || c.MaxToolsPerSrc != 10_000 || c.MaxListBytes != 64<<20 {
		t.Fatalf("defaults: %d %d %v", c.MaxToolsPerSrc, c.MaxListBytes, err)
	}
	for _, bad := range []map[string]string{
		{"TOOLGATE_STDIO_COMMANDS": "npx env=NODE_OPTIONS"},
		{"TOOLGATE_STDIO_COMMANDS": "npx env=PREFIX"},
		{"TOOLGATE_STDIO_COMMANDS": "npx env=A-B"},
		{"TOOLGATE_STDIO_COMMANDS": "env=API_KEY"},
		{"TOOLGATE_MAX_TOOLS_PER_SOURCE": "0"},
		{"TOOLGATE_MAX_LIST_BYTES": "100"},
	} {
		if _, err := Load(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestEmbedderDefaultsFollowTheEmbedder: the default embedder is the built-in one with word
// vectors (local-words), and two search defaults are the built-in embedders'. Their
// similarities are mostly how many words two texts share (the hashed part is most of the
// cosine), so their searches scale an unsure vector branch down (vector confidence); they
// know few senses, so the meaning branch is on, for the hashing embedder alone (local) too.
// A configured embedder's similarities sit on another scale and carry meaning, so both are
// off; either way both can be set, within their ranges.
func TestEmbedderDefaultsFollowTheEmbedder(t *testing.T) {
	if c, err := Load(env(nil)); err != nil || c.Embedder != "local-words" {
		t.Fatalf("default embedder %q (%v), want local-words", c.Embedder, err)
	}
	openai := map[string]string{"TOOLGATE_EMBEDDER": "openai", "TOOLGATE_EMBED_URL": "http://127.0.0.1:9/v1",
		"TOOLGATE_EMBED_MODEL": "m", "TOOLGATE_EMBED_DIMS": "8"}
	with := func(kv map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for key, val := range kv {
			out[key] = val
		}
		return out
	}
	for _, setting := range []struct {
		name                string
		of                  func(Config) float64
		local, set          float64
		setText, outOfRange string
	}{
		{"TOOLGATE_SEARCH_VECTOR_CONFIDENCE", func(c Config) float64 { return c.SearchVectorConfidence }, 0.4, 0.3, "0.3", "2"},
		{"TOOLGATE_SEARCH_WEIGHT_MEANING", func(c Config) float64 { return c.SearchWeightMeaning }, 0.3, 0.5, "0.5", "-1"},
	} {
		for _, c := range []struct {
			kv   map[string]string
			want float64
		}{
			{nil, setting.local},
			{map[string]string{"TOOLGATE_EMBEDDER": "local"}, setting.local},
			{openai, 0},
			{map[string]string{setting.name: "0"}, 0},
			{with(openai, setting.name, setting.setText), setting.set},
		} {
			got, err := Load(env(c.kv))
			if err != nil {
				t.Fatalf("%v: %v", c.kv, err)
			}
			if setting.of(got) != c.want {
				t.Errorf("%v: %s %v, want %v", c.kv, setting.name, setting.of(got), c.want)
			}
		}
		var ce *Error
		if _, err := Load(env(map[string]string{setting.name: setting.outOfRange})); !errors.As(err, &ce) || ce.Setting != setting.name {
			t.Errorf("out of range: got %v, want an error naming %s", err, setting.name)
		}
	}
}
