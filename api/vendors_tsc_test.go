package api_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	dir := t.TempDir()
	modules, err := filepath.Abs(vendorSDKs)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json": `{"type":"module"}`,
		"tsconfig.json": `{"compilerOptions":{"target":"es2022","module":"nodenext","moduleResolution":"nodenext",` +
			`"strict":true,"noEmit":true,"skipLibCheck":true,"types":["node"]},"include":["*.ts"]}`,
	}
	for i, b := range blocks {
		files[fmt.Sprintf("recipe%d.ts", i+1)] = b + "\nexport {};\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(modules, ".bin", "tsc"), "-p", dir)
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
