// Package functions holds the SQL functions and triggers that are applied after the
// migrations, whole and idempotently (CREATE OR REPLACE), whenever a file changed: their code
// has one home here instead of a new copy in every migration that changes them.
package functions

import "embed"

// FS holds the *.sql files, applied in name order.
//
//go:embed *.sql
var FS embed.FS
