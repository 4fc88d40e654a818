// Package jsonl reads JSON-lines files, one JSON value per line: the catalogs of `toolgate
// import` and PUT /v1/sources/{name}/tools (catalog.Parse), and the datasets and agent
// traces of `toolgate eval` (internal/eval). Blank lines are skipped; a line that cannot be
// read (longer than the limit) stops the reading with an error naming it. How each line is
// decoded (eval's are strict: DisallowUnknownFields) is the caller's.
package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Reader reads the lines of a JSON-lines file.
type Reader struct {
	sc   *bufio.Scanner
	line int
	err  error
}

// NewReader reads r; a line may hold at most maxLine bytes.
func NewReader(r io.Reader, maxLine int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine)), maxLine)
	return &Reader{sc: sc}
}

// Next returns the next line that is not blank, trimmed of the white space around it, and
// its number (the first line is 1). ok is false at the end of the input, or when a line
// could not be read (Err says which). raw is valid until the next call.
func (r *Reader) Next() (line int, raw []byte, ok bool) {
	for r.sc.Scan() {
		r.line++
		if raw := bytes.TrimSpace(r.sc.Bytes()); len(raw) > 0 {
			return r.line, raw, true
		}
	}
	if err := r.sc.Err(); err != nil {
		r.err = &LineError{Line: r.line + 1, Err: err}
	}
	return 0, nil, false
}

// Line is the number of lines read so far, blank ones included.
func (r *Reader) Line() int { return r.line }

// Err is the error that ended Next early, a *LineError; nil when the input ended.
func (r *Reader) Err() error { return r.err }

// LineError is a line that could not be read; Err is bufio.ErrTooLong for a line over the
// limit.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }
