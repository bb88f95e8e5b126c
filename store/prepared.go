package store

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"
)

// prepared runs the statements of the delivery path (publish, an attempt's
// target, its begin and completion) as prepared statements: database/sql
// prepares each once per connection, so PostgreSQL parses and plans them
// once per connection rather than at every call. It is a
// sqlx.QueryerContext; a statement that cannot be prepared runs unprepared.
type prepared struct {
	db    *sqlx.DB
	stmts sync.Map // query text → *preparing
	// prepare prepares a query on db (db.PreparexContext; tests count
	// through it).
	prepare func(ctx context.Context, query string) (*sqlx.Stmt, error)
}

// preparing is one query's statement, prepared once however many callers
// ask for it at the same time. A second statement for the same query would
// have to be closed, and closing waits for every connection it was
// prepared on to finish its current query, which may be waiting on a lock
// for as long as that caller's transaction lasts.
type preparing struct {
	once sync.Once
	st   *sqlx.Stmt
	err  error
}

// stmt returns query prepared on the pool, preparing it the first time; a
// failed preparation is tried again at the next call.
func (p *prepared) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	v, ok := p.stmts.Load(query)
	if !ok {
		v, _ = p.stmts.LoadOrStore(query, &preparing{})
	}
	ps := v.(*preparing)
	ps.once.Do(func() { ps.st, ps.err = p.prepare(ctx, query) })
	if ps.err != nil {
		p.stmts.CompareAndDelete(query, ps)
	}
	return ps.st, ps.err
}

// QueryContext runs query as a prepared statement.
func (p *prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.db.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryxContext runs query as a prepared statement.
func (p *prepared) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.db.QueryxContext(ctx, query, args...)
	}
	return st.QueryxContext(ctx, args...)
}

// QueryRowxContext runs query as a prepared statement.
func (p *prepared) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.db.QueryRowxContext(ctx, query, args...)
	}
	return st.QueryRowxContext(ctx, args...)
}

// ExecContext runs query, which returns no rows, as a prepared statement.
func (p *prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// close closes every statement prepared.
func (p *prepared) close() {
	p.stmts.Range(func(_, v any) bool {
		ps := v.(*preparing)
		ps.once.Do(func() {}) // waits for a preparation under way
		if ps.st != nil {
			_ = ps.st.Close()
		}
		return true
	})
}
