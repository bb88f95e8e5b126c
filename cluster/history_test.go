package cluster_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// killHistory kills (kill -9) history-1, waits until history-2 has taken
// every shard it held, and starts it again (ready once it holds shards
// again).
func killHistory(r *run) string {
	db, err := sqlx.Open("postgres", r.c.PG.DatabaseURL("temporal"))
	if err != nil {
		r.t.Error(err)
		return ""
	}
	defer db.Close()
	addr := r.addr("history-1")
	held, total := owned(r, db, addr)
	if held == 0 {
		r.t.Errorf("history-1 (%s) holds none of the %d shards: killing it tests nothing", addr, total)
	}
	if err := r.c.Kill("history-1"); err != nil {
		r.t.Error(err)
	}
	begin := time.Now()
	for left, _ := owned(r, db, addr); left > 0 && time.Since(begin) < 2*time.Minute; left, _ = owned(r, db, addr) {
		time.Sleep(200 * time.Millisecond)
	}
	moved := time.Since(begin)
	if left, _ := owned(r, db, addr); left > 0 {
		r.t.Errorf("history-1 still holds %d shards 2 minutes after it died", left)
	}
	begin = time.Now()
	if err := r.c.StartProcess(context.Background(), "history-1"); err != nil {
		r.t.Error(err)
	}
	back, _ := owned(r, db, addr)
	return fmt.Sprintf("history-1 held %d of %d shards; history-2 held them all %.1f s after the kill; "+
		"restarted, history-1 was serving %d shards again %.1f s later", held, total, moved.Seconds(), back, time.Since(begin).Seconds())
}

// owned counts the shards whose owner is the history host at addr (its
// address starts the owner's name in the shard's record), and all the
// shards; a query that fails is a test error, and counts none.
func owned(r *run, db *sqlx.DB, addr string) (n, total int) {
	err := db.QueryRow(`SELECT count(*) FILTER (WHERE position(convert_to($1, 'UTF8') IN data) > 0), count(*)
		FROM shards`, addr+"-").Scan(&n, &total)
	if err != nil {
		r.t.Error(err)
	}
	return n, total
}

// addr is process name's address.
func (r *run) addr(name string) string {
	for _, p := range r.c.Processes() {
		if p.Name == name {
			return p.Addr
		}
	}
	r.t.Errorf("no process %s", name)
	return ""
}
