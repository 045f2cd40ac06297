// Package migrations holds CommiTea's numbered SQL migrations. Files are
// named NNN_description.sql, applied in order, each in its own transaction;
// the store package embeds and runs them.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
