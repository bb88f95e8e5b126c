package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/lib/pq" // the PostgreSQL driver
)

// pgStats counts hookrelay's own statements in PostgreSQL over a phase,
// with pg_stat_statements (which `hookrelay dev` and the cluster load) and
// pg_stat_wal's flushes, for the statements per delivery BENCHMARKS.md
// states.
type pgStats struct {
	db    *sql.DB
	syncs int64
}

// openStats connects to hookrelay's database at url and makes sure the
// extension exists; nil when it cannot (the phase then reports none).
func openStats(url string) (*pgStats, error) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	if err == nil { // planning time too, from the next statement on
		_, err = db.ExecContext(ctx, `ALTER SYSTEM SET pg_stat_statements.track_planning = on`)
	}
	if err == nil {
		_, err = db.ExecContext(ctx, `SELECT pg_reload_conf()`)
	}
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	return &pgStats{db: db}, nil
}

// reset starts counting afresh.
func (p *pgStats) reset() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.db.ExecContext(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		return err
	}
	return p.db.QueryRowContext(ctx, `SELECT wal_sync FROM pg_stat_wal`).Scan(&p.syncs)
}

// report lists the statements of hookrelay's database since reset, most
// called first, each as calls per delivery, and their total and the commits
// per delivery.
func (p *pgStats) report(deliveries int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := p.db.QueryContext(ctx, `SELECT calls, total_exec_time, total_plan_time, regexp_replace(query, '\s+', ' ', 'g')
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query NOT LIKE '%pg_stat_%' ORDER BY calls DESC`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	var total int64
	for rows.Next() {
		var calls int64
		var ms, plan float64
		var q string
		if err := rows.Scan(&calls, &ms, &plan, &q); err != nil {
			return "", err
		}
		total += calls
		if float64(calls)/float64(deliveries) >= 0.01 || ms/float64(deliveries) >= 0.01 {
			fmt.Fprintf(&b, "  %6.2f calls, %6.3f ms planning, %6.3f ms executing  %.90s\n",
				float64(calls)/float64(deliveries), plan/float64(deliveries), ms/float64(deliveries), q)
		}
	}
	var syncs int64
	err = p.db.QueryRowContext(ctx, `SELECT wal_sync FROM pg_stat_wal`).Scan(&syncs)
	head := fmt.Sprintf("%.2f statements and %.2f WAL flushes (fsync; the whole server's) per delivery (%d deliveries); per statement, per delivery:",
		float64(total)/float64(deliveries), float64(syncs-p.syncs)/float64(deliveries), deliveries)
	return head + "\n" + b.String(), errors.Join(err, rows.Err())
}

// profile takes a CPU profile of the API's process (`hookrelay dev` holds
// the worker too) for d, written to dir/name.pprof, when
// HOOKRELAY_BENCH_PROFILE names dir; it runs in the background.
func profile(api, name string, d time.Duration) {
	dir := os.Getenv("HOOKRELAY_BENCH_PROFILE")
	if dir == "" {
		return
	}
	go fetchProfile(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", api, int(d.Seconds())), filepath.Join(dir, name+".pprof"))
	go func() {
		time.Sleep(d / 2)
		fetchProfile(api+"/debug/pprof/goroutine?debug=1", filepath.Join(dir, name+".goroutines.txt"))
	}()
}

// fetchProfile saves what url answers (a profile) to path.
func fetchProfile(url, path string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+benchMetricsToken)
	resp, err := benchHTTP.Do(req)
	if err != nil {
		fmt.Println("profile:", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		_ = f.Close()
	}
	if err != nil {
		fmt.Println("profile:", err)
	}
}

// checkpoint has PostgreSQL (hookrelay's; the cluster's holds Temporal's
// databases too) write a checkpoint before a paced phase. Left alone, the
// cluster's first timed checkpoint, five minutes after it starts, fell in
// hookrelay's 50/s phase in each of the four runs whose log showed it, and
// in no phase of the floor's. The first change to each page after a
// checkpoint writes the whole page into the log, and that phase alone paid
// for it. After CHECKPOINT every paced phase pays it from its start, and
// none waits behind the writing of the pages the phases before it dirtied
// (BENCHMARKS.md).
func (r *shippedRun) checkpoint() {
	db, err := sql.Open("postgres", r.dev.pgURL)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, err = db.ExecContext(ctx, `CHECKPOINT`)
		cancel()
		err = errors.Join(err, db.Close())
	}
	if err != nil {
		r.b.Errorf("checkpoint: %v", err)
	}
}
