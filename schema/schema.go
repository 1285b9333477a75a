// Package schema embeds the golang-migrate migrations of the server's PostgreSQL database.
// Files are NNNNNN_name.up.sql / .down.sql; sqlc reads the same files to type the queries.
package schema

import "embed"

// Migrations holds every migration file of this folder.
//
//go:embed *.sql
var Migrations embed.FS
