package store

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// timeLayout is how times travel to the database: UTC, fixed width, with
// microseconds (PostgreSQL's precision). Fixed width makes SQLite's text
// order time order; PostgreSQL parses it into timestamptz.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// dbTime carries a time to and from either dialect. The zero time is
// NULL.
type dbTime struct{ time.Time }

// Value implements driver.Valuer.
func (t dbTime) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return t.UTC().Truncate(time.Microsecond).Format(timeLayout), nil
}

// Scan implements sql.Scanner: a time.Time (lib/pq), or text in
// timeLayout (SQLite), or NULL.
func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
	case time.Time:
		t.Time = v.UTC()
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	default:
		return fmt.Errorf("scan time: unexpected %T", src)
	}
	return nil
}

func (t *dbTime) parse(s string) error {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan time: %w", err)
	}
	t.Time = v.UTC()
	return nil
}

// dbText carries a string that is NULL when empty: the JSON columns,
// where "" is not valid JSON.
type dbText string

// Value implements driver.Valuer.
func (s dbText) Value() (driver.Value, error) {
	if s == "" {
		return nil, nil
	}
	return string(s), nil
}

// Scan implements sql.Scanner.
func (s *dbText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*s = ""
	case string:
		*s = dbText(v)
	case []byte:
		*s = dbText(v)
	default:
		return fmt.Errorf("scan text: unexpected %T", src)
	}
	return nil
}
