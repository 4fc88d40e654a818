package chart

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestPNGs(t *testing.T) {
	dir := t.TempDir()
	line := filepath.Join(dir, "line.png")
	if err := LinePNG(line, "latency", "workers", "ms", []Series{{Name: "p50", X: []float64{1, 2, 4}, Y: []float64{1, 1.5, 3}}, {Name: "p95", X: []float64{1, 2, 4}, Y: []float64{2, 3, 6}}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{line} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Fatalf("%s: tiny image %v", path, b)
		}
	}
	if err := LinePNG(filepath.Join(dir, "x.png"), "", "", "", []Series{{Name: "bad", X: []float64{1}, Y: nil}}); err == nil {
		t.Fatal("mismatched series accepted")
	}
}
