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
	stmts sync.Map // query text → *sqlx.Stmt
}

// stmt returns query prepared on the pool, preparing it the first time.
func (p *prepared) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := p.stmts.Load(query); ok {
		return st.(*sqlx.Stmt), nil
	}
	st, err := p.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := p.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return prev.(*sqlx.Stmt), nil
	}
	return st, nil
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
	p.stmts.Range(func(_, st any) bool {
		_ = st.(*sqlx.Stmt).Close()
		return true
	})
}
