package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// maxDepth is the deepest nesting of objects and arrays the go-sdk decodes in one message
// (its internal/json defaultMaxDepth). A deeper message fails whole: for a tools/list
// answer, the listing of every tool of the page, and over stdio or a stream the session.
// So a tool nested past it is cut out of the answer before the go-sdk reads it (trimDeepTools).
const maxDepth = 1000

// deepToolMeta marks, in its _meta, a tool trimDeepTools replaced: convert turns it into a
// catalog tool that Validate refuses, so a sync skips and reports it, as other bad tools.
const deepToolMeta = "toolgate/nested-too-deep"

// depthScan follows the nesting of objects and arrays through JSON text given in pieces,
// as the go-sdk counts it: brackets outside strings.
type depthScan struct {
	depth, max        int
	inString, escaped bool
}

func (d *depthScan) scan(p []byte) {
	for _, b := range p {
		if d.inString {
			switch {
			case d.escaped:
				d.escaped = false
			case b == '\\':
				d.escaped = true
			case b == '"':
				d.inString = false
			}
			continue
		}
		switch b {
		case '"':
			d.inString = true
		case '{', '[':
			d.depth++
			d.max = max(d.max, d.depth)
		case '}', ']':
			d.depth = max(d.depth-1, 0)
		}
	}
}

// trimDeepTools returns msg, one JSON-RPC message, with every tool of its result's tools
// list that nests past maxDepth replaced by its name and deepToolMeta, so that the go-sdk
// decodes the rest of the listing; changed says whether it did. A message within maxDepth,
// or deep elsewhere, or not a well-formed object, is returned as it is (and fails in the
// go-sdk as before). parts are the message's bytes in order.
func trimDeepTools(parts [][]byte) (msg []byte, changed bool) {
	var d depthScan
	for _, p := range parts {
		d.scan(p)
	}
	if d.max <= maxDepth {
		return nil, false
	}
	return replaceDeepTools(bytes.Join(parts, nil))
}

// replaceDeepTools finds result.tools in the message msg and replaces its deep elements.
// The message nests the message object, the result object and the tools array: an element
// may itself nest maxDepth-3 levels.
func replaceDeepTools(msg []byte) ([]byte, bool) {
	result, ok := member(msg, skipSpace(msg, 0), "result")
	if !ok {
		return nil, false
	}
	tools, ok := member(msg, result, "tools")
	if !ok || tools >= len(msg) || msg[tools] != '[' {
		return nil, false
	}
	var out bytes.Buffer
	copied := 0
	for i := skipSpace(msg, tools+1); i < len(msg) && msg[i] != ']'; {
		end, depth, ok := valueEnd(msg, i)
		if !ok {
			return nil, false
		}
		if 3+depth > maxDepth {
			name := []byte(`""`)
			if n, ok := member(msg, i, "name"); ok && msg[n] == '"' {
				nend, _, _ := valueEnd(msg, n)
				name = msg[n:nend]
			}
			out.Write(msg[copied:i])
			out.WriteString(`{"name":`)
			out.Write(name)
			out.WriteString(`,"inputSchema":{"type":"object"},"_meta":{"` + deepToolMeta + `":true}}`)
			copied = end
		}
		i = skipSpace(msg, end)
		if i < len(msg) && msg[i] == ',' {
			i = skipSpace(msg, i+1)
		}
	}
	out.Write(msg[copied:])
	return out.Bytes(), true
}

// member returns where the value of key starts in the object that starts at i.
func member(b []byte, i int, key string) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		kend, _, ok := valueEnd(b, i)
		if !ok {
			return 0, false
		}
		k := b[i+1 : kend-1]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		v := skipSpace(b, i+1)
		if string(k) == key {
			return v, v < len(b)
		}
		vend, _, ok := valueEnd(b, v)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return 0, false
}

// valueEnd returns the end of the JSON value that starts at i and how deep it nests (a
// scalar 0, an empty object 1). It checks no more than it needs to find the end.
func valueEnd(b []byte, i int) (int, int, bool) {
	if i >= len(b) {
		return 0, 0, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, 0, true
			}
		}
		return 0, 0, false
	case '{', '[':
		var d depthScan
		for j := i; j < len(b); j++ {
			d.scan(b[j : j+1])
			if d.depth == 0 && !d.inString {
				return j + 1, d.max, true
			}
		}
		return 0, 0, false
	}
	j := i
	for j < len(b) && strings.IndexByte(",}] \t\r\n", b[j]) < 0 {
		j++
	}
	return j, 0, j > i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// framedFilter hands on what r reads one frame at a time, each through next: a stdio
// server's lines, a stream's events.
type framedFilter struct {
	r       *bufio.Reader
	next    func(*bufio.Reader) ([]byte, error)
	pending []byte
	err     error
}

func (f *framedFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.next(f.r)
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine reads one line, its newline included, of at most limit bytes; over is set when
// the line goes on past them (what was read is returned).
func readLine(r *bufio.Reader, limit int64) (line []byte, over bool, err error) {
	for {
		piece, err := r.ReadSlice('\n')
		line = append(line, piece...)
		if int64(len(line)) > limit {
			return line, true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, false, err
		}
	}
}

// stdioLines is the filter of a stdio server's output: one message per line, a line over
// limit handed on as it is (the go-sdk refuses it).
func stdioLines(r io.Reader, limit int64) io.Reader {
	return &framedFilter{r: bufio.NewReader(r), next: func(r *bufio.Reader) ([]byte, error) {
		line, over, err := readLine(r, limit)
		if over {
			return line, err
		}
		if msg, changed := trimDeepTools([][]byte{line}); changed {
			return msg, err
		}
		return line, err
	}}
}

// streamEvents is the filter of a server-sent event stream: an event whose data (its data
// lines joined with newlines, as the go-sdk reads it) nests too deep is written again with
// the data trimDeepTools returns; any other event is handed on as it came.
func streamEvents(r io.Reader, limit int64) io.Reader {
	return &framedFilter{r: bufio.NewReader(r), next: func(r *bufio.Reader) ([]byte, error) {
		var raw, data []byte
		var fields [][]byte
		for {
			line, over, err := readLine(r, limit)
			raw = append(raw, line...)
			if over || err != nil {
				return raw, err
			}
			text := bytes.TrimRight(line, "\r\n")
			if len(text) == 0 {
				break
			}
			if v, ok := bytes.CutPrefix(text, []byte("data:")); ok {
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimSpace(v)...)
			} else {
				fields = append(fields, line)
			}
			if int64(len(raw)) > limit {
				return raw, nil
			}
		}
		msg, changed := trimDeepTools([][]byte{data})
		if !changed {
			return raw, nil
		}
		var out bytes.Buffer
		for _, f := range fields {
			out.Write(f)
		}
		for l := range bytes.SplitSeq(msg, []byte("\n")) {
			out.WriteString("data: ")
			out.Write(l)
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
		return out.Bytes(), nil
	}}
}
