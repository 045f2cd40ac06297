package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/commitea/commitea/store"
)

// cpuMark is where one phase of a round started: this process's CPU time,
// the CPU time of the round database's backends, and the database's
// statistics counters.
type cpuMark struct {
	wall    time.Time
	self    time.Duration
	backend time.Duration
	stats   dbStats
}

// dbStats are the round database's cumulative counters: commits, and rows
// written per table.
type dbStats struct {
	commits int64
	writes  map[string]int64 // table -> rows inserted + updated + deleted
}

// phaseCost is where one phase's time went, per row (raw) or delivery.
type phaseCost struct {
	self, backend time.Duration // CPU per row
	commits       float64       // commits per row
	busy          float64       // share of the machine's cores busy with this process and the backends
	writes        map[string]float64
}

// markCPU ends one phase and begins the next: the returned end holds the
// CPU times as the phase left them, begin the same taken once the
// statistics have settled, after the wait.
func markCPU(ctx context.Context, pool *store.Pool) (end, begin cpuMark, err error) {
	end = cpuMark{wall: time.Now(), self: selfCPU()}
	if end.backend, err = backendCPU(ctx, pool); err != nil {
		return end, begin, err
	}
	// An idle backend's counters reach the statistics views within ten
	// seconds.
	time.Sleep(11 * time.Second)
	if end.stats, err = readDBStats(ctx, pool); err != nil {
		return end, begin, err
	}
	begin = cpuMark{wall: time.Now(), self: selfCPU(), stats: end.stats}
	begin.backend, err = backendCPU(ctx, pool)
	return end, begin, err
}

func (m cpuMark) costSince(from cpuMark, rows int) phaseCost {
	n := float64(rows)
	c := phaseCost{
		self:    (m.self - from.self) / time.Duration(rows),
		backend: (m.backend - from.backend) / time.Duration(rows),
		commits: float64(m.stats.commits-from.stats.commits) / n,
		busy:    float64(m.self-from.self+m.backend-from.backend) / float64(m.wall.Sub(from.wall)) / float64(runtime.NumCPU()),
		writes:  map[string]float64{},
	}
	for t, v := range m.stats.writes {
		if d := v - from.stats.writes[t]; d > 0 {
			c.writes[t] = float64(d) / n
		}
	}
	return c
}

func (c phaseCost) String() string {
	tables := make([]string, 0, len(c.writes))
	for t := range c.writes {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = fmt.Sprintf("%s %.2f", t, c.writes[t])
	}
	return fmt.Sprintf("cpu go %dµs pg %dµs (%.0f%% of %d cores), commits %.3f, rows written: %s",
		c.self.Microseconds(), c.backend.Microseconds(), 100*c.busy, runtime.NumCPU(), c.commits, strings.Join(parts, ", "))
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU sums the CPU time of the backends connected to the pool's
// database, read from /proc (the database runs on this machine for the
// benchmark; elsewhere it reads 0).
func backendCPU(ctx context.Context, pool *store.Pool) (time.Duration, error) {
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var total time.Duration
	tick := time.Second / 100 // USER_HZ on Linux
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return 0, err
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// fields[11], fields[12]: utime, stime (fields 14 and 15 of stat).
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		total += time.Duration(u+st) * tick
	}
	return total, rows.Err()
}

func readDBStats(ctx context.Context, pool *store.Pool) (dbStats, error) {
	s := dbStats{writes: map[string]int64{}}
	if err := pool.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&s.commits); err != nil {
		return s, err
	}
	rows, err := pool.Query(ctx, `SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables`)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return s, err
		}
		s.writes[t] = n
	}
	return s, rows.Err()
}
