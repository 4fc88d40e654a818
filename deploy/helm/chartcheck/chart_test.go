package chartcheck

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../toolgate"
	repoRoot  = "../../.."
	release   = "tg"
	namespace = "toolgate"
	fullname  = "tg-toolgate"
	dbURL     = "postgres://toolgate:secret@db.example.com:5432/toolgate?sslmode=require"
)

// variant is a set of values the chart is documented with: values files of the chart
// directory, then values set on the command line (--set).
type variant struct {
	name  string
	files []string
	set   map[string]any
}

var withDB = map[string]any{"database": map[string]any{"url": dbURL}}

// variants are the chart's default values (with the one value that has no default) and
// each example values file of deploy/helm/toolgate/examples (docs/deploy.md).
var variants = []variant{
	{name: "default", set: withDB},
	{name: "ingress-hpa", files: []string{"examples/ingress-hpa.yaml"}, set: withDB},
	{name: "replica-existing-secret", files: []string{"examples/replica-existing-secret.yaml"}},
	{name: "chart-secret", set: map[string]any{
		"database":  map[string]any{"url": dbURL, "readUrl": "postgres://toolgate:secret@replica.example.com:5432/toolgate"},
		"providers": map[string]any{"embedKey": "sk-embed"},
		"secretEnv": map[string]any{"TOOLGATE_LLM_KEY": "sk-llm"},
	}},
}

// manifests are the rendered objects of one variant, decoded strictly, by name.
type manifests struct {
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	services    map[string]*corev1.Service
	secrets     map[string]*corev1.Secret
	ingresses   map[string]*networkingv1.Ingress
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs        map[string]*policyv1.PodDisruptionBudget
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// values are the user values of v: its files in order, then its --set values.
func (v variant) values(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, f := range v.files {
		vals, err := chartutil.ReadValuesFile(filepath.Join(chartDir, f))
		if err != nil {
			t.Fatal(err)
		}
		out = mergeValues(out, vals)
	}
	return mergeValues(out, v.set)
}

// mergeValues merges src into a copy of dst, src winning, maps merged key by key (as Helm
// merges -f files and --set).
func mergeValues(dst, src map[string]any) map[string]any {
	out := maps.Clone(dst)
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// render renders the chart with vals as `helm install tg deploy/helm/toolgate -n toolgate`
// would (helm template), and returns the manifests of each template file.
func render(t *testing.T, ch *chart.Chart, vals map[string]any) (map[string]string, error) {
	t.Helper()
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValues(ch, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decode decodes every rendered manifest strictly into its Kubernetes API type: a field the
// type does not have, or a value of the wrong type, fails.
func decode(t *testing.T, files map[string]string) manifests {
	t.Helper()
	m := manifests{
		deployments: map[string]*appsv1.Deployment{}, jobs: map[string]*batchv1.Job{},
		services: map[string]*corev1.Service{}, secrets: map[string]*corev1.Secret{},
		ingresses: map[string]*networkingv1.Ingress{}, hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{},
	}
	for _, file := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(file, "NOTES.txt") {
			continue
		}
		for _, doc := range docSeparator.Split(files[file], -1) {
			if isEmptyDoc(doc) {
				continue
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v\n%s", file, err, doc)
			}
			var name string
			var err error
			switch gvk := head.APIVersion + " " + head.Kind; gvk {
			case "apps/v1 Deployment":
				name, err = decodeInto(doc, m.deployments)
			case "batch/v1 Job":
				name, err = decodeInto(doc, m.jobs)
			case "v1 Service":
				name, err = decodeInto(doc, m.services)
			case "v1 Secret":
				name, err = decodeInto(doc, m.secrets)
			case "networking.k8s.io/v1 Ingress":
				name, err = decodeInto(doc, m.ingresses)
			case "autoscaling/v2 HorizontalPodAutoscaler":
				name, err = decodeInto(doc, m.hpas)
			case "policy/v1 PodDisruptionBudget":
				name, err = decodeInto(doc, m.pdbs)
			default:
				t.Fatalf("%s: a %s, which this test does not decode: add it", file, gvk)
			}
			if err != nil {
				t.Fatalf("%s: %s %s does not decode strictly: %v\n%s", file, head.Kind, name, err, doc)
			}
		}
	}
	return m
}

func isEmptyDoc(doc string) bool {
	for line := range strings.Lines(doc) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// object is a Kubernetes API type with its metadata.
type object interface {
	GetName() string
	GetNamespace() string
}

func decodeInto[T any, PT interface {
	*T
	object
}](doc string, into map[string]PT) (string, error) {
	obj := PT(new(T))
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		return "", err
	}
	if _, dup := into[obj.GetName()]; dup {
		return obj.GetName(), fmt.Errorf("a second object named %q", obj.GetName())
	}
	into[obj.GetName()] = obj
	return obj.GetName(), nil
}

// The chart lints clean (helm lint: no warning, no error) with each documented set of values.
func TestChartLints(t *testing.T) {
	for _, v := range variants {
		l := lint.AllWithKubeVersion(chartDir, v.values(t), namespace, nil)
		for _, msg := range l.Messages {
			if msg.Severity >= support.WarningSev {
				t.Errorf("%s: helm lint: %s", v.name, msg)
			}
		}
	}
}

// Every documented values file is one of the variants the tests render.
func TestEveryExampleIsAVariant(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tested []string
	for _, v := range variants {
		tested = append(tested, v.files...)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(chartDir, f)
		if !slices.Contains(tested, rel) {
			t.Errorf("%s is not rendered by any variant", rel)
		}
	}
}

// Each variant renders to manifests that decode strictly into the Kubernetes API types and
// hold what the deployment relies on.
func TestChartRenders(t *testing.T) {
	ch := loadChart(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			vals := v.values(t)
			files, err := render(t, ch, vals)
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, files)
			checkPods(t, ch, m)
			checkRoles(t, m, vals)
			checkMigrationHook(t, m, vals)
			checkRouting(t, m, vals)
			checkSettings(t, m)
		})
	}
}

// podTemplates are the pod templates of the Deployments and the Job, by object name.
func (m manifests) podTemplates() map[string]corev1.PodTemplateSpec {
	out := map[string]corev1.PodTemplateSpec{}
	for name, d := range m.deployments {
		out[name] = d.Spec.Template
	}
	for name, j := range m.jobs {
		out[name] = j.Spec.Template
	}
	return out
}

// Every pod runs the chart's image as the image's non-root user, on a read-only root
// filesystem, without privileges.
func checkPods(t *testing.T, ch *chart.Chart, m manifests) {
	t.Helper()
	wantImage := "toolgate:" + ch.Metadata.AppVersion
	for name, pod := range m.podTemplates() {
		sc := pod.Spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("%s: pod security context %+v: want runAsNonRoot and a non-zero runAsUser", name, sc)
		}
		if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
			t.Errorf("%s: the pod mounts a service account token it never uses", name)
		}
		if len(pod.Spec.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", name, len(pod.Spec.Containers))
		}
		c := pod.Spec.Containers[0]
		if c.Image != wantImage {
			t.Errorf("%s: image %q, want %q (the chart's appVersion)", name, c.Image, wantImage)
		}
		if len(c.Command) != 0 {
			t.Errorf("%s: command %q replaces the image's ENTRYPOINT", name, c.Command)
		}
		csc := c.SecurityContext
		if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
			csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
			csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s: container security context %+v", name, csc)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: resources %+v: want CPU and memory requests and a memory limit", name, c.Resources)
		}
	}
}

// The api and worker Deployments serve their role (docs/scaling.md), probed on /healthz and
// /readyz, migrating at start only when the migration Job is off.
func checkRoles(t *testing.T, m manifests, vals map[string]any) {
	t.Helper()
	for _, role := range []string{"api", "worker"} {
		d := m.deployments[fullname+"-"+role]
		if d == nil {
			t.Fatalf("no Deployment %s-%s among %v", fullname, role, slices.Sorted(maps.Keys(m.deployments)))
		}
		c := d.Spec.Template.Spec.Containers[0]
		if want := []string{"serve", "--role", role, "--no-migrate"}; !slices.Equal(c.Args, want) {
			t.Errorf("%s: args %q, want %q", d.Name, c.Args, want)
		}
		if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
			t.Errorf("%s: ports %+v", d.Name, c.Ports)
		}
		for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz", c.StartupProbe: "/healthz"} {
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "http" {
				t.Errorf("%s: probe %+v, want GET %s on port http", d.Name, probe, want)
			}
		}
		sel := d.Spec.Selector.MatchLabels
		if sel["app.kubernetes.io/component"] != role || !subset(sel, d.Spec.Template.Labels) {
			t.Errorf("%s: selector %v, pod labels %v", d.Name, sel, d.Spec.Template.Labels)
		}
		if grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds; grace == nil || *grace <= 30 {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want more than TOOLGATE_SHUTDOWN_TIMEOUT (30s)", d.Name, grace)
		}
		pdb := m.pdbs[d.Name]
		if pdb == nil || !subset(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) || pdb.Spec.MaxUnavailable == nil {
			t.Errorf("%s: PodDisruptionBudget %+v", d.Name, pdb)
		}
	}
	api := m.deployments[fullname+"-api"]
	hpa := m.hpas[fullname+"-api"]
	if autoscaled := lookup(vals, "api", "autoscaling", "enabled") == true; autoscaled {
		if hpa == nil || hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != api.Name || hpa.Spec.MinReplicas == nil || hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
			t.Errorf("HPA %+v, want one scaling %s", hpa, api.Name)
		}
		if api.Spec.Replicas != nil {
			t.Errorf("%s: replicas %d beside an HPA, which would fight it at every upgrade", api.Name, *api.Spec.Replicas)
		}
	} else if hpa != nil || api.Spec.Replicas == nil {
		t.Errorf("no autoscaling asked for: HPA %v, replicas %v", hpa, api.Spec.Replicas)
	}
}

// The migration Job is a pre-install and pre-upgrade hook, run once per release before the
// pods, after the chart's Secret it reads.
func checkMigrationHook(t *testing.T, m manifests, vals map[string]any) {
	t.Helper()
	job := m.jobs[fullname+"-migrate"]
	if job == nil || len(m.jobs) != 1 {
		t.Fatalf("jobs %v, want %s-migrate", slices.Sorted(maps.Keys(m.jobs)), fullname)
	}
	if job.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" || job.Annotations["helm.sh/hook-delete-policy"] != "before-hook-creation" {
		t.Errorf("migration Job annotations %v", job.Annotations)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Args, []string{"migrate", "up"}) || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("migration Job: args %q, restart policy %q", c.Args, job.Spec.Template.Spec.RestartPolicy)
	}
	secretName := fullname
	if s, _ := vals["existingSecret"].(string); s != "" {
		secretName = s
		if len(m.secrets) != 0 {
			t.Errorf("existingSecret %s given, and the chart made Secrets %v", s, slices.Sorted(maps.Keys(m.secrets)))
		}
	} else {
		sec := m.secrets[fullname]
		if sec == nil || sec.StringData["DATABASE_URL"] != dbURL {
			t.Fatalf("the chart's Secret %+v lacks DATABASE_URL", sec)
		}
		// Hooks run before the release's other resources: the Secret the Job reads is a hook too, made first.
		if sec.Annotations["helm.sh/hook"] != job.Annotations["helm.sh/hook"] || !(weight(t, sec.Annotations) < weight(t, job.Annotations)) {
			t.Errorf("Secret annotations %v: want the Job's hooks with a lower weight than %v", sec.Annotations, job.Annotations)
		}
	}
	for name, pod := range m.podTemplates() {
		from := pod.Spec.Containers[0].EnvFrom
		if len(from) != 1 || from[0].SecretRef == nil || from[0].SecretRef.Name != secretName {
			t.Errorf("%s: envFrom %+v, want the Secret %s", name, from, secretName)
		}
	}
}

func weight(t *testing.T, annotations map[string]string) int {
	t.Helper()
	var w int
	if _, err := fmt.Sscan(annotations["helm.sh/hook-weight"], &w); err != nil {
		t.Fatalf("hook weight of %v: %v", annotations, err)
	}
	return w
}

// The Service sends to the api pods' http port, and the Ingress, when on, to the Service.
func checkRouting(t *testing.T, m manifests, vals map[string]any) {
	t.Helper()
	svc := m.services[fullname]
	api := m.deployments[fullname+"-api"]
	if svc == nil || len(m.services) != 1 || !subset(svc.Spec.Selector, api.Spec.Template.Labels) ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Fatalf("Service %+v, want one to the api pods' http port", svc)
	}
	ing := m.ingresses[fullname]
	if lookup(vals, "ingress", "enabled") != true {
		if ing != nil {
			t.Errorf("an Ingress with ingress.enabled off")
		}
		return
	}
	if ing == nil || len(ing.Spec.Rules) == 0 || len(ing.Spec.TLS) == 0 {
		t.Fatalf("Ingress %+v, want rules and TLS", ing)
	}
	for _, r := range ing.Spec.Rules {
		for _, p := range r.HTTP.Paths {
			if b := p.Backend.Service; b == nil || b.Name != svc.Name || b.Port.Number != svc.Spec.Ports[0].Port {
				t.Errorf("Ingress path %s goes to %+v, want %s:%d", p.Path, b, svc.Name, svc.Spec.Ports[0].Port)
			}
		}
	}
}

// Every environment variable the chart sets, and every key of its Secret, is a setting
// toolgate reads (internal/config).
func checkSettings(t *testing.T, m manifests) {
	t.Helper()
	known := configSettings(t)
	for name, pod := range m.podTemplates() {
		for _, e := range pod.Spec.Containers[0].Env {
			if !known[e.Name] {
				t.Errorf("%s: env %s is no setting of internal/config", name, e.Name)
			}
		}
	}
	for name, s := range m.secrets {
		for k := range s.StringData {
			if !known[k] {
				t.Errorf("Secret %s: key %s is no setting of internal/config", name, k)
			}
		}
	}
}

// configSettings are the environment variables toolgate reads: the quoted names in
// internal/config.
func configSettings(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal", "config", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("internal/config: %v", err)
	}
	out := map[string]bool{}
	name := regexp.MustCompile(`"((?:TOOLGATE|DATABASE|OTEL)_[A-Z0-9_]+|LISTEN_ADDR)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllSubmatch(src, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

// Without a database URL or a Secret of one, the chart refuses to render, saying what is missing.
func TestChartWantsADatabase(t *testing.T) {
	_, err := render(t, loadChart(t), map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "database.url") {
		t.Fatalf("render without database.url: %v", err)
	}
}

// The chart's Secret carries the replica and provider settings given as values.
func TestChartSecretCarriesOptionalSettings(t *testing.T) {
	files, err := render(t, loadChart(t), variants[3].values(t))
	if err != nil {
		t.Fatal(err)
	}
	sec := decode(t, files).secrets[fullname]
	for k, want := range map[string]string{
		"DATABASE_READ_URL":  "postgres://toolgate:secret@replica.example.com:5432/toolgate",
		"TOOLGATE_EMBED_KEY": "sk-embed", "TOOLGATE_LLM_KEY": "sk-llm",
	} {
		if got := sec.StringData[k]; got != want {
			t.Errorf("Secret %s = %q, want %q", k, got, want)
		}
	}
	if _, ok := sec.StringData["TOOLGATE_RERANK_KEY"]; ok {
		t.Errorf("an empty provider key is in the Secret: %v", slices.Sorted(maps.Keys(sec.StringData)))
	}
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return len(sub) > 0
}

// lookup is vals[k1][k2]..., nil when a level is missing.
func lookup(vals map[string]any, keys ...string) any {
	var cur any = vals
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// The chart is released with the application: its version and appVersion are the VERSION
// file's (docs/upgrading.md), so the default image tag is the version being built.
func TestChartVersionIsTheRelease(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(raw))
	if md := loadChart(t).Metadata; md.Version != want || md.AppVersion != want {
		t.Errorf("Chart.yaml version %q, appVersion %q; VERSION %q", md.Version, md.AppVersion, want)
	}
}
