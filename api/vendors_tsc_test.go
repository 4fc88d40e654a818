package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/mcptest"
)

// vendorSDKs is where scripts/test.sh installs the vendors' SDK packages and the TypeScript
// compiler the recipes of docs/vendors.md are checked with (relative to this package).
var vendorSDKs = filepath.Join("..", ".cache", "vendors", "node_modules")

// TestVendorRecipesTypeCheck type-checks every TypeScript block of docs/vendors.md with tsc
// against the official SDK packages (openai, @anthropic-ai/sdk, ai): a recipe that builds a
// vendor request from toolgate's answers in a shape the SDK does not take fails here.
func TestVendorRecipesTypeCheck(t *testing.T) {
	t.Parallel()
	blocks := recipeBlocks(t)
	files := map[string]string{}
	for i, b := range blocks {
		files[fmt.Sprintf("recipe%d.ts", i+1)] = b + "\nexport {};\n"
	}
	tsc(t, typeScriptDir(t, files), true)
}

// TestAISDKRecipeRunsEndToEnd runs the Vercel AI SDK recipe of docs/vendors.md as it is
// written, against toolgate, with the SDK's mock language model: the model first sees only
// the search tool, calls it, toolgate's ranking (the recipe's search callback) loads the
// deferred tool, and the model's next step sees and calls it.
func TestAISDKRecipeRunsEndToEnd(t *testing.T) {
	t.Parallel()
	recipe := recipeBlocks(t)[2]
	a := newVendorAPI(t)
	srv := httptest.NewServer(a.e)
	t.Cleanup(srv.Close)
	// The prelude defines what the recipe declares: the model (the mock, scripted: search,
	// call the stock price tool, answer) and callTool; at exit it prints what happened.
	prelude := `import { MockLanguageModelV4 } from "ai/test";
const g = globalThis as any;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const steps: any[] = [
  { content: [{ type: "tool-call", toolCallId: "c1", toolName: "search", input: JSON.stringify({ query: "latest stock price of a ticker" }) }],
    finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
  { content: [{ type: "tool-call", toolCallId: "c2", toolName: "acme__get_stock_price", input: JSON.stringify({ ticker: "ACME" }) }],
    finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
  { content: [{ type: "text", text: "ACME trades at 42." }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
];
g.seen = [];
g.called = [];
g.model = new MockLanguageModelV4({ doGenerate: async (options: any) => {
  g.seen.push((options.tools ?? []).map((t: any) => t.name).sort());
  return steps.shift();
} });
g.callTool = async (name: string, input: unknown) => { g.called.push({ name, input }); return "42"; };
process.on("exit", () => console.log(JSON.stringify({ seen: g.seen, called: g.called })));
export {};
`
	dir := typeScriptDir(t, map[string]string{
		"prelude.ts": prelude,
		"recipe.ts":  "import \"./prelude.js\";\n" + strings.ReplaceAll(recipe, "http://localhost:8080", srv.URL) + "\nexport {};\n",
	})
	tsc(t, dir, false)
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "out", "recipe.js"))
	cmd.Env = append(os.Environ(), "TOOLGATE_KEY="+a.acmeOnly)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "ACME trades at 42." {
		t.Fatalf("output: %q", out)
	}
	var got struct {
		Seen   [][]string `json:"seen"`
		Called []struct {
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"called"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	// the model's three steps: the search tool alone, then the tool toolgate found beside it
	if len(got.Seen) != 3 || !slices.Equal(got.Seen[0], []string{"search"}) ||
		!slices.Contains(got.Seen[1], "acme__get_stock_price") || slices.Contains(got.Seen[1], "globex__send_fax") {
		t.Errorf("tools seen by the model: %v", got.Seen)
	}
	if len(got.Called) != 1 || got.Called[0].Name != "acme__get_stock_price" || got.Called[0].Input["ticker"] != "ACME" {
		t.Errorf("calls: %+v", got.Called)
	}
}

// recipeBlocks are the TypeScript blocks of docs/vendors.md: the OpenAI, Anthropic and AI
// SDK recipes. It skips the test when the vendor SDKs are not installed.
func recipeBlocks(t *testing.T) []string {
	t.Helper()
	for _, pkg := range []string{".bin/tsc", "openai", "@anthropic-ai/sdk", "ai", "@types/node"} {
		if _, err := os.Stat(filepath.Join(vendorSDKs, pkg)); err != nil {
			msg := fmt.Sprintf("%v: the vendor SDKs are not installed; `make test` (scripts/test.sh) installs them", err)
			if os.Getenv(mcptest.RequireNPMEnv) != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "docs", "vendors.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := tsBlocks(string(page))
	if len(blocks) != 3 {
		t.Fatalf("%d TypeScript blocks in docs/vendors.md, want 3 (OpenAI, Anthropic, AI SDK)", len(blocks))
	}
	return blocks
}

// typeScriptDir is a directory of an ES module project holding files, with the vendor SDKs
// as its node_modules.
func typeScriptDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	modules, err := filepath.Abs(vendorSDKs)
	if err != nil {
		t.Fatal(err)
	}
	files["package.json"] = `{"type":"module"}`
	files["tsconfig.json"] = `{"compilerOptions":{"target":"es2022","module":"nodenext","moduleResolution":"nodenext",` +
		`"strict":true,"skipLibCheck":true,"types":["node"],"outDir":"out"},"include":["*.ts"]}`
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tsc compiles the project in dir: type-checks it, and emits it into dir/out unless noEmit.
func tsc(t *testing.T, dir string, noEmit bool) {
	t.Helper()
	args := []string{"-p", dir}
	if noEmit {
		args = append(args, "--noEmit")
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "node_modules", ".bin", "tsc"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out.String())
	}
}

// tsBlocks are the fenced ```ts blocks of a Markdown page.
func tsBlocks(page string) []string {
	var blocks []string
	var cur []string
	in := false
	for line := range strings.Lines(page) {
		switch {
		case !in && strings.TrimSpace(line) == "```ts":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, ""))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}
