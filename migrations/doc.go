// Package migrations holds perfbot's database schema as SQL files, one
// directory per dialect (postgres, sqlite), embedded in the binary and
// applied by goose's Provider. The first schema (00001_init.sql) holds
// repos, commits, runs, samples and comparisons; 00002_deliveries.sql adds
// webhook deliveries, 00003_profiles.sql the profiles benchmark runs
// wrote, 00004_run_tool.sql the tool a run ran under (callgrind),
// 00005_run_kind_bisect.sql the run kind 'bisect', 00006 the changes a
// PR comment reported, 00007 a run key on samples, 00008 the spans of a
// run's phases, 00009_sessions.sql the sessions (one compare, baseline or
// bisect attempt) a run belongs to, so that the runs of an attempt that was
// killed are kept but never reused as a baseline, 00010_pull_heads.sql the
// newest head of each pull request, which serialises the job queue's
// inserts for one pull request (the table is written on PostgreSQL only,
// where the queue lives), 00011_comparison_session.sql the session
// that made each comparison, so that a retried job publishes what an
// earlier attempt stored instead of measuring again, 00012 the pull
// request a comparison was made for, and 00013_run_round.sql the round of
// its session each run ran in, so that runs measured beside each other
// can be found again.
package migrations
