package chartcheck

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, USER, ...
	args string
}

// stage is one FROM of the Dockerfile and the instructions under it.
type stage struct {
	from   string // FROM's arguments
	instrs []instruction
}

func (s stage) all(cmd string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// parseDockerfile reads the stages of a Dockerfile: comments dropped, lines ending in a
// backslash joined with the next.
func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []stage
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, stage{from: in.args})
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before FROM", path, in.cmd)
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(stages) < 2 {
		t.Fatalf("%s: %d stages, want a build stage and a runtime stage", path, len(stages))
	}
	return stages
}

// What the chart expects of the image: the ENTRYPOINT its containers' args go to, the
// numeric non-root user its pods run as, the port it probes; and the version build args.
func TestDockerfileMatchesTheChart(t *testing.T) {
	stages := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	build, final := stages[0], stages[len(stages)-1]

	users := final.all("USER")
	if len(users) != 1 {
		t.Fatalf("final stage USER %q, want one", users)
	}
	uid, gid, _ := strings.Cut(users[0], ":")
	u, err := strconv.ParseInt(uid, 10, 64)
	if err != nil || u == 0 {
		t.Fatalf("USER %q: want a numeric non-root user (Kubernetes' runAsNonRoot checks the number)", users[0])
	}
	files, err := render(t, loadChart(t), variants[0].values(t))
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, files)
	for name, pod := range m.podTemplates() {
		sc := pod.Spec.SecurityContext
		if *sc.RunAsUser != u || (gid != "" && (sc.RunAsGroup == nil || strconv.FormatInt(*sc.RunAsGroup, 10) != gid)) {
			t.Errorf("%s: runs as %d:%v, the image's USER is %s", name, *sc.RunAsUser, sc.RunAsGroup, users[0])
		}
	}

	var entrypoint []string
	if eps := final.all("ENTRYPOINT"); len(eps) != 1 || json.Unmarshal([]byte(eps[0]), &entrypoint) != nil {
		t.Fatalf("final stage ENTRYPOINT %q, want one in exec form", eps)
	}
	if !slices.Equal(entrypoint, []string{"toolgate"}) {
		t.Errorf("ENTRYPOINT %q, want [\"toolgate\"]: the chart's containers give only its arguments", entrypoint)
	}
	if !slices.Contains(final.all("COPY"), "--from=build /out/toolgate /usr/local/bin/toolgate") {
		t.Errorf("final stage copies %q, want the build stage's /out/toolgate onto PATH", final.all("COPY"))
	}
	if expose := final.all("EXPOSE"); !slices.Equal(expose, []string{"8080"}) {
		t.Errorf("EXPOSE %q, want 8080, the chart's containerPort", expose)
	}
	for _, arg := range []string{"VERSION", "COMMIT", "BUILD_DATE"} {
		if !slices.Contains(build.all("ARG"), arg) {
			t.Errorf("build stage lacks ARG %s (the version stamped into the binary)", arg)
		}
	}
	// docker compose's build args are the Dockerfile's.
	compose := readCompose(t)
	for arg := range compose.Services["toolgate"].Build.Args {
		if !slices.Contains(build.all("ARG"), arg) {
			t.Errorf("docker-compose.yml passes build arg %s, which the Dockerfile does not declare", arg)
		}
	}
}

// composeFile is the part of docker-compose.yml the checks read.
type composeFile struct {
	Services map[string]struct {
		Build struct {
			Context string            `json:"context"`
			Args    map[string]string `json:"args"`
		} `json:"build"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
	} `json:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Services["toolgate"]; !ok {
		t.Fatalf("docker-compose.yml has no toolgate service")
	}
	return c
}

// The build stage's commands, run here as a script (the output directory moved from /out to
// a temporary one), build a binary stamped with the build args; that binary accepts the
// arguments of every container of the chart and of docker compose.
func TestDockerBuildStageBuildsAStampedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (links a whole binary)")
	}
	stages := parseDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	build := stages[0]
	runs := build.all("RUN")
	if len(runs) == 0 || !strings.Contains(runs[len(runs)-1], "/out") {
		t.Fatalf("build stage RUN %q: want the last to build into /out", runs)
	}
	if wd := build.all("WORKDIR"); !slices.Equal(wd, []string{"/src"}) || !slices.Contains(build.all("COPY"), ". .") {
		t.Fatalf("build stage WORKDIR %q, COPY %q: want the repository at /src", wd, build.all("COPY"))
	}
	out := t.TempDir()
	script := "set -e\n" + strings.ReplaceAll(strings.Join(runs, "\n"), "/out", out) + "\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "VERSION=0.0.0-chartcheck", "COMMIT=0123456789ab", "BUILD_DATE=2026-01-02T03:04:05Z")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the build stage's commands:\n%s\nfailed: %v\n%s", script, err, b)
	}
	bin := filepath.Join(out, "toolgate")
	got, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "toolgate 0.0.0-chartcheck (commit 0123456789ab, 2026-01-02T03:04:05Z)\n"; string(got) != want {
		t.Errorf("toolgate version = %q, want %q", got, want)
	}

	// Each container's arguments, with --help: flags the binary does not know fail here.
	files, err := render(t, loadChart(t), variants[0].values(t))
	if err != nil {
		t.Fatal(err)
	}
	argv := map[string][]string{}
	for name, pod := range decode(t, files).podTemplates() {
		argv["chart "+name] = pod.Spec.Containers[0].Args
	}
	for name, svc := range readCompose(t).Services {
		if svc.Build.Context != "" {
			argv["docker compose "+name] = svc.Command
		}
	}
	for name, args := range argv {
		help := exec.Command(bin, append(slices.Clone(args), "--help")...)
		help.Env = []string{"PATH=" + os.Getenv("PATH")}
		if b, err := help.CombinedOutput(); err != nil {
			t.Errorf("%s: toolgate %s --help: %v\n%s", name, strings.Join(args, " "), err, b)
		}
	}
}

// docker-compose.yml sets only settings toolgate reads.
func TestComposeSettings(t *testing.T) {
	known := configSettings(t)
	for name, svc := range readCompose(t).Services {
		if svc.Build.Context == "" {
			continue // not toolgate
		}
		for env := range svc.Environment {
			if !known[env] {
				t.Errorf("docker-compose.yml service %s: %s is no setting of internal/config", name, env)
			}
		}
	}
}
