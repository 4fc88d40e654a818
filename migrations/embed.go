// Package migrations holds toolgate's schema as golang-migrate SQL files, embedded in the binary.
package migrations

import "embed"

// FS holds the numbered *.up.sql and *.down.sql files.
//
//go:embed *.sql
var FS embed.FS
