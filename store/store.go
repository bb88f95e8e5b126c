// Package store keeps hookrelay's state in PostgreSQL: accounts, endpoints,
// subscriptions, events (with their bodies), deliveries, attempts and dead
// letters. Workflows never call it; activities and the API do.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	_ "github.com/lib/pq" // PostgreSQL driver

	"github.com/hookrelay/hookrelay/migrations"
	"github.com/hookrelay/hookrelay/secrets"
)

// DefaultAccount is the account the /v1 API acts as when no credentials are
// given.
const DefaultAccount = "acct_default"

var (
	// ErrNotFound is returned when a row does not exist (or belongs to
	// another account).
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned when a change contradicts the current state.
	ErrConflict = errors.New("conflict")
)

// Store is the PostgreSQL-backed store.
type Store struct {
	db *sqlx.DB
	// prep runs the delivery path's statements prepared.
	prep *prepared
	// firsts hands the targets of first attempts from publishing over to
	// this process's worker (ShareFirstAttempts); nil hands none over.
	firsts *FirstAttempts
	// unsent remembers the rows this process opened and sent nothing for
	// (failed opens, first attempts handed over and not taken), for the
	// next open of their deliveries, or the workers' loop, to remove.
	unsent *unsent
	// keys seal and open stored secrets (UseKeys).
	keys *secrets.Ring
}

// DefaultConnections bounds the connections one Store opens to
// PostgreSQL (SetConnections). Few: on a 2-core machine each busy
// connection is a PostgreSQL process competing for the CPU with Temporal and
// hookrelay, and with 40 a burst's publishes took most of it, slowing
// every other endpoint's deliveries (docs/endpoints.md#isolation).
const DefaultConnections = 10

// SetConnections bounds the connections the store opens to n; zero keeps
// DefaultConnections.
func (s *Store) SetConnections(n int) {
	if n > 0 {
		s.db.SetMaxOpenConns(n)
		s.db.SetMaxIdleConns(n)
	}
}

// Open connects to PostgreSQL at url and checks the connection.
func Open(ctx context.Context, url string) (*Store, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{db: db, prep: &prepared{db: db, prepare: db.PreparexContext}, unsent: &unsent{}}
	s.SetConnections(DefaultConnections)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	return s, nil
}

// Migrate applies the schema migrations.
func (s *Store) Migrate(ctx context.Context) error {
	return migrations.Up(ctx, s.db.DB)
}

// MigrateDownTo undoes the schema migrations newer than version.
func (s *Store) MigrateDownTo(ctx context.Context, version int64) error {
	return migrations.DownTo(ctx, s.db.DB, version)
}

// Ping checks that PostgreSQL answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	s.prep.close()
	return s.db.Close()
}

// DB exposes the pool to tests and benchmarks that check stored rows.
func (s *Store) DB() *sqlx.DB { return s.db }

// NewID returns a random id with the given prefix, e.g. "sub_3f9a...".
func NewID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("store: crypto/rand: %v", err))
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// IsID reports whether id has the shape NewID gives ids with prefix: the
// prefix, "_" and 20 lowercase hexadecimal digits.
func IsID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 20 || strings.ToLower(rest) != rest {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// notFound turns sql.ErrNoRows into ErrNotFound, naming what was missing;
// nil stays nil.
func notFound(err error, what, id string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, ErrNotFound)
	}
	return fmt.Errorf("store: %s %q: %w", what, id, err)
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsInvalidData tells whether PostgreSQL refused err's statement for the data
// it carried (SQLSTATE class 22: a NUL byte, an encoding it cannot store, a
// value out of range): the same data will always be refused, so retrying the
// statement is pointless.
func IsInvalidData(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code.Class() == "22"
}

// IsUnavailable tells whether err means PostgreSQL could not be reached or
// went away (refused or dropped connections, a server shutting down or
// starting): the same request may well succeed a moment later, so the API
// answers 503 with Retry-After.
func IsUnavailable(err error) bool {
	var pqErr *pq.Error
	var netErr net.Error // refused, reset and timed-out connections among them
	if errors.As(err, &pqErr) {
		c := pqErr.Code
		return c.Class() == "08" || c.Class() == "57" || c == "53300" // connection, operator intervention, too many connections
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &netErr)
}
