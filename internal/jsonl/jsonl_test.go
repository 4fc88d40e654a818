package jsonl_test

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/jsonl"
)

func TestReader(t *testing.T) {
	r := jsonl.NewReader(strings.NewReader("{\"a\":1}\n\n  \n\t{\"a\":2}  \r\n{\"a\":3}"), 100)
	var lines []int
	var raws []string
	for {
		n, raw, ok := r.Next()
		if !ok {
			break
		}
		lines, raws = append(lines, n), append(raws, string(raw))
	}
	if r.Err() != nil || strings.Join(raws, "|") != `{"a":1}|{"a":2}|{"a":3}` || lines[0] != 1 || lines[1] != 4 || lines[2] != 5 {
		t.Fatalf("lines %v %q, err %v", lines, raws, r.Err())
	}
}

func TestReaderLineTooLong(t *testing.T) {
	r := jsonl.NewReader(strings.NewReader("{}\n"+strings.Repeat("x", 50)+"\n{}"), 20)
	if _, _, ok := r.Next(); !ok {
		t.Fatal("first line")
	}
	if _, _, ok := r.Next(); ok {
		t.Fatal("a line over the limit was read")
	}
	var le *jsonl.LineError
	if !errors.As(r.Err(), &le) || le.Line != 2 || !errors.Is(r.Err(), bufio.ErrTooLong) {
		t.Fatalf("err %v, want line 2 too long", r.Err())
	}
}
