package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// FirstSeen records a webhook delivery id and reports whether this is the
// first time it was seen: false means GitHub (or someone replaying its
// request) sent it before, and it must start nothing. It is atomic across
// processes sharing the database.
func (db *DB) FirstSeen(ctx context.Context, id string) (bool, error) {
	return db.firstSeen(ctx, db.db, id)
}

// FirstSeenTx is FirstSeen inside tx, a transaction on this database
// (SQL's): the id is recorded only if tx commits, so a delivery whose
// other work in tx failed leaves no record and its redelivery is new. Of
// two transactions with the same id, the second waits for the first to
// end and sees the id as new only if the first rolled back.
func (db *DB) FirstSeenTx(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	return db.firstSeen(ctx, tx, id)
}

func (db *DB) firstSeen(ctx context.Context, ex interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, id string) (bool, error) {
	if id == "" {
		return false, fmt.Errorf("record delivery: empty delivery id")
	}
	res, err := ex.ExecContext(ctx, db.db.Rebind(`
		INSERT INTO webhook_deliveries (id, received_at) VALUES (?, ?)
		ON CONFLICT (id) DO NOTHING`), id, dbTime{time.Now()})
	if err != nil {
		return false, fmt.Errorf("record delivery %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("record delivery %s: %w", id, err)
	}
	return n == 1, nil
}

// Forget removes a delivery id recorded by FirstSeen, so that a delivery
// whose handling failed is accepted when GitHub redelivers it.
func (db *DB) Forget(ctx context.Context, id string) error {
	if _, err := db.db.ExecContext(ctx, db.db.Rebind(`DELETE FROM webhook_deliveries WHERE id = ?`), id); err != nil {
		return fmt.Errorf("forget delivery %s: %w", id, err)
	}
	return nil
}

// PruneDeliveries deletes delivery ids received before cutoff (GitHub
// redelivers only recent deliveries) and returns how many it deleted.
func (db *DB) PruneDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := db.db.ExecContext(ctx, db.db.Rebind(`DELETE FROM webhook_deliveries WHERE received_at < ?`), dbTime{cutoff})
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	return res.RowsAffected()
}
