package migrations

import "embed"

// FS holds the migrations: postgres/*.sql and sqlite/*.sql, goose's
// annotated SQL, numbered from 00001. Both directories describe the same
// logical schema and always carry the same versions.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS

// The directories of FS, one per dialect.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)
