// Package migrations holds perfbot's database schema as SQL files, one
// directory per dialect (postgres, sqlite), embedded in the binary and
// applied by goose's Provider. The first schema (00001_init.sql) holds
// repos, commits, runs, samples and comparisons; 00002_deliveries.sql adds
// webhook deliveries, 00003_profiles.sql the profiles benchmark runs
// wrote, 00004_run_tool.sql the tool a run ran under (callgrind),
// 00005_run_kind_bisect.sql the run kind 'bisect'.
package migrations
