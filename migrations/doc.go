// Package migrations holds perfbot's database schema as SQL files, one
// directory per dialect (postgres, sqlite), embedded in the binary and
// applied by goose's Provider. The compare issue adds the first schema.
package migrations
