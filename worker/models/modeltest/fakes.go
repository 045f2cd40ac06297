package modeltest

import (
	"context"
	"sync"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
)

// Ledger is an in-memory models.UsageLedger.
type Ledger struct {
	mu   sync.Mutex
	rows []store.ModelUsage
}

// AddModelUsage implements models.UsageLedger.
func (l *Ledger) AddModelUsage(_ context.Context, u store.ModelUsage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range l.rows {
		if r.Day.Equal(u.Day) && r.Role == u.Role && r.Tool == u.Tool && r.Model == u.Model {
			r.Requests += u.Requests
			r.Failures += u.Failures
			r.PromptTokens += u.PromptTokens
			r.CompletionTokens += u.CompletionTokens
			r.CostUSD += u.CostUSD
			l.rows[i] = r
			return nil
		}
	}
	l.rows = append(l.rows, u)
	return nil
}

// ModelUsageOn implements models.UsageLedger.
func (l *Ledger) ModelUsageOn(_ context.Context, day time.Time) ([]store.ModelUsage, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []store.ModelUsage
	for _, r := range l.rows {
		if r.Day.Equal(day) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Rows returns every row.
func (l *Ledger) Rows() []store.ModelUsage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]store.ModelUsage(nil), l.rows...)
}

// Clock is a settable clock for budget days.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time; pass it as RouterConfig.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Fake is a models.Model answered by a function, for tests of consumers
// that need no wire format.
type Fake struct {
	// ModelName is reported as Name(); default "fake:model".
	ModelName string
	Fn        func(ctx context.Context, req models.Request) (models.Response, error)

	mu       sync.Mutex
	requests []models.Request
}

// Name implements the router's naming convention.
func (f *Fake) Name() string {
	if f.ModelName == "" {
		return "fake:model"
	}
	return f.ModelName
}

// Generate implements models.Model.
func (f *Fake) Generate(ctx context.Context, req models.Request) (models.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	return f.Fn(ctx, req)
}

// Requests returns what Generate received.
func (f *Fake) Requests() []models.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]models.Request(nil), f.requests...)
}
