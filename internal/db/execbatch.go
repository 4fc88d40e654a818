package db

import "errors"

// This file is written by hand; the others are sqlc's (make generate).

// BatchExecer is the result of a :batchexec query (InsertToolVector, UpsertToolVector).
type BatchExecer interface {
	Exec(func(int, error))
	Close() error
}

// ExecBatch runs every statement of b and returns the first statement's error joined with
// the batch's own.
func ExecBatch(b BatchExecer) error {
	var first error
	b.Exec(func(_ int, err error) {
		if err != nil && first == nil {
			first = err
		}
	})
	return errors.Join(first, b.Close())
}
