package server

import (
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// Deliveries is how many webhook deliveries at once perfbot serve sizes
// its database pool for: each holds one connection for its transaction
// (a few milliseconds). GitHub sends events as they happen, and a push
// to a busy repository, or a redelivery of many, brings several at once;
// issue 45 measured 8. A ninth waits in serve for a connection to come
// free, which on a database of two busy cores is quicker than opening one.
const Deliveries = 8

// DefaultPool is the connection pool perfbot serve opens its database
// with unless the config's database: block says otherwise: a connection
// for each of Deliveries webhook deliveries and each of the control
// queue's queue.ControlWorkers jobs, and River's own (queue.Pool): 16,
// all kept when idle. The dashboard and /metrics share them.
func DefaultPool() store.Pool { return queue.Pool(Deliveries + queue.ControlWorkers) }
