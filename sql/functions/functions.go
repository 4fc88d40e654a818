// Package functions holds the SQL functions, triggers and views that are applied after the
// migrations, whole and idempotently (CREATE OR REPLACE), whenever a file changed or a
// migration ran: their code has one home here instead of a new copy in every migration that
// changes them. A migration that first made one of them keeps its copy (it is history, and
// later migrations may need the object), but the definition in force is the one here.
package functions

import "embed"

// FS holds the *.sql files, applied in name order.
//
//go:embed *.sql
var FS embed.FS
