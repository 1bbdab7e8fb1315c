package queue

import (
	"time"

	"github.com/perfbot/perfbot/store"
)

// ControlWorkers is how many control-queue jobs (replies, queued checks,
// /perfbot run look-ups, publish retries) perfbot serve works at once.
const ControlWorkers = 4

// riverConns is how many connections one River client's own work holds
// at once: its producer fetching jobs, its completer marking them done
// and its leader elector, each one query at a time, and, in the client
// that leads, one of the maintenance services (rescuer, cleaners,
// scheduler, reindexer), each a short query on its own timer that rarely
// meets another.
const riverConns = 4

// Pool lifetimes, the same in every process. A connection idle for
// poolIdleTime is closed, so a process holds its burst's connections
// for the next burst (GitHub's deliveries come together: a push, its
// pull request's events, a redelivery of many) but not through a quiet
// hour. Every connection is replaced after poolLifetime, which bounds
// what a PostgreSQL backend's caches grow to and lets a failover or a
// changed DNS name reach every connection within it; at 16 connections
// that is one new connection every two minutes.
const (
	poolIdleTime = 5 * time.Minute
	poolLifetime = 30 * time.Minute
)

// Pool returns the connection pool of a process with users database
// users at once — the jobs its River client works at once and anything
// else it does beside them (perfbot serve's webhook deliveries): a
// connection for each, and riverConns for River's own work. All of them
// are kept when idle: database/sql keeps 2 by default, and a burst wider
// than that opens a new PostgreSQL connection (a process fork and an
// authentication) for most of its queries — 147 to 162 per 1,000
// webhook deliveries at 8 at once in issue 45. Beyond the limit a query
// waits for a connection to come free, in this process, rather than
// opening another backend on a database whose cores are already busy.
func Pool(users int) store.Pool {
	n := max(users, 1) + riverConns
	return store.Pool{MaxOpen: n, MaxIdle: n, MaxLifetime: poolLifetime, MaxIdleTime: poolIdleTime}
}
