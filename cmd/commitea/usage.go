package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
)

// runUsage prints language-model usage: per day, role, tool and model for
// the last days, then today's use of every budget.
func (m *Main) runUsage(ctx context.Context, g globalOptions, args []string) error {
	days := 7
	fs := m.newFlagSet("usage", "[--days N]", &g)
	fs.IntVar(&days, "days", days, "show the last `N` days, today included (1 to 366)")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	if days < 1 || days > 366 {
		return usageError{fmt.Sprintf("usage: --days must be between 1 and 366, got %d", days)}
	}
	cfg, err := m.loadConfig(g.configPath, "usage")
	if err != nil {
		return err
	}
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	loc, err := time.LoadLocation(cfg.Calendar.TimeZone)
	if err != nil {
		return fmt.Errorf("usage: calendar time zone: %w", err)
	}
	now := time.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	from := today.AddDate(0, 0, -(days - 1))
	rows, err := store.ModelUsageBetween(ctx, pool, from, today)
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	writeModelUsage(m.Stdout, cfg.Models, rows, from, today, loc)
	return nil
}

// writeModelUsage renders the usage table and today's budgets.
func writeModelUsage(w io.Writer, mc config.ModelsConfig, rows []store.ModelUsage, from, today time.Time, loc *time.Location) {
	fmt.Fprintf(w, "Model usage %s to %s (days in %s)\n\n", from.Format(time.DateOnly), today.Format(time.DateOnly), loc)
	if len(rows) == 0 {
		fmt.Fprintln(w, "No model requests in these days.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DAY\tROLE\tTOOL\tMODEL\tREQUESTS\tFAILED\tPROMPT TOKENS\tCOMPLETION TOKENS\tCOST USD")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.4f\n", r.Day.Format(time.DateOnly), r.Role, r.Tool, r.Model,
				r.Requests, r.Failures, r.PromptTokens, r.CompletionTokens, r.CostUSD)
		}
		_ = tw.Flush()
	}

	type totals struct {
		requests, tokens int64
		cost             float64
	}
	used := map[string]totals{}
	todayDate := today.Format(time.DateOnly)
	for _, r := range rows {
		if r.Day.Format(time.DateOnly) != todayDate {
			continue
		}
		for _, k := range []string{r.Role, "all"} {
			t := used[k]
			t.requests += r.Requests
			t.tokens += r.PromptTokens + r.CompletionTokens
			t.cost += r.CostUSD
			used[k] = t
		}
	}
	limit := func(n float64, format string) string {
		if n <= 0 {
			return "no limit"
		}
		return fmt.Sprintf(format, n)
	}
	fmt.Fprintf(w, "\nToday's budgets (%s; they reset at midnight %s)\n\n", todayDate, loc)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tMODEL\tREQUESTS\tTOKENS\tCOST USD")
	budgets := []struct {
		scope, model     string
		requests, tokens int
		cost             float64
	}{
		{"small", orNone(mc.Small.Model), mc.Small.DailyRequests, mc.Small.DailyTokens, mc.Small.DailyCostUSD},
		{"big", orNone(mc.Big.Model), mc.Big.DailyRequests, mc.Big.DailyTokens, mc.Big.DailyCostUSD},
		{"all", "", mc.DailyRequests, mc.DailyTokens, mc.DailyCostUSD},
	}
	for _, b := range budgets {
		u := used[b.scope]
		fmt.Fprintf(tw, "%s\t%s\t%d of %s\t%d of %s\t%.4f of %s\n", b.scope, b.model,
			u.requests, limit(float64(b.requests), "%.0f"), u.tokens, limit(float64(b.tokens), "%.0f"), u.cost, limit(b.cost, "%.2f"))
	}
	_ = tw.Flush()
}

func orNone(model string) string {
	if model == "" {
		return "(none)"
	}
	return model
}
