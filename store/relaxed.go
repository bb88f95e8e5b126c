package store

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// relaxedConns bounds the connections of the relaxed pool: it carries only
// the outcomes written in the background (activities.Later), one short
// statement each.
const relaxedConns = 8

// openRelaxed opens the pool of the writes a crash of PostgreSQL may lose
// (synchronous_commit off): their commit does not wait for the WAL to reach
// the disk, so each costs no flush of its own, and holds its row locks (the
// endpoint's counters, which every outcome adds to) for less time. Only an
// outcome something else recovers goes through it: a first attempt's
// outcome written after its workflow was told, which the sweeper settles
// from the workflow's result when it is missing (starter.SettleOpen), as
// after a worker that stopped before writing it. A crash of PostgreSQL loses
// at most the last few hundred milliseconds of them (three times
// wal_writer_delay); the database stays consistent.
func openRelaxed(u string) (*prepared, error) {
	db, err := sqlx.Open("postgres", withSettings(u, "synchronous_commit", "off"))
	if err != nil {
		return nil, fmt.Errorf("store: open relaxed pool: %w", err)
	}
	db.SetMaxOpenConns(relaxedConns)
	db.SetMaxIdleConns(relaxedConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &prepared{db: db}, nil
}

// withSettings is the connection string u (a URL or key=value pairs) with
// the PostgreSQL settings kv ("name", "value", ...) added: lib/pq sends a
// parameter it does not know itself to the server, as a setting of every
// session it opens.
func withSettings(u string, kv ...string) string {
	if p, err := url.Parse(u); err == nil && (p.Scheme == "postgres" || p.Scheme == "postgresql") {
		q := p.Query()
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		p.RawQuery = q.Encode()
		return p.String()
	}
	out := strings.TrimSpace(u)
	for i := 0; i+1 < len(kv); i += 2 {
		out += " " + kv[i] + "=" + kv[i+1]
	}
	return out
}
