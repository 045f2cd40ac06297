// Package prose checks text that a language model wrote from deterministic
// data: every number and every date in the text must appear in that data,
// or the text is rejected and the caller falls back to its own template.
// The model phrases; it never gets to state a figure of its own.
//
// What counts: dates (2026-12-01, 12/01, Dec 1, 1 December 2026, weekday
// names), clock times (09:00), numbers (42, 3.5, 5,000, 85%, #123, the
// words two to twenty) and words with digits in them (v1.0, dev03), which
// must appear whole in the data (p10, p50, p80 and p90, the names of the
// forecast's percentiles, always may). A number in the text matches a
// number in the data when the data's value, rounded to the decimals the
// text shows, equals it; a percentage also matches a fraction (0.85 for 85%). Signs are
// ignored ("+2 working days" matches a shift of 2). A date without a year
// matches any date of the data on that month and day; a weekday matches
// when some date of the data falls on it. Relative dates (tomorrow,
// yesterday, this/next/last week or month) are checked against the day
// given by SetToday: some date of the data must fall on that day, in that
// Monday-to-Sunday week or in that month. Without SetToday they pass
// unchecked; "today" and "now" always pass.
package prose

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Facts are the numbers, dates and clock times a text may mention.
type Facts struct {
	numbers   map[float64]bool // absolute values
	dates     map[civilDate]bool
	monthDays map[[2]int]bool
	weekdays  map[time.Weekday]bool
	clocks    map[string]bool
	idents    map[string]bool
	loc       *time.Location
	today     civilDate // zero: relative dates are not checked
}

type civilDate struct {
	y int
	m time.Month
	d int
}

// NewFacts returns empty facts; timestamps added later are read as dates in
// loc (nil means UTC) as well as in UTC.
func NewFacts(loc *time.Location) *Facts {
	if loc == nil {
		loc = time.UTC
	}
	return &Facts{
		numbers: map[float64]bool{}, dates: map[civilDate]bool{}, monthDays: map[[2]int]bool{},
		weekdays: map[time.Weekday]bool{}, clocks: map[string]bool{}, idents: map[string]bool{}, loc: loc,
	}
}

// FactsOf collects the facts of values: each is encoded to JSON and walked;
// numbers are taken as they are, strings are read for timestamps, dates,
// clock times and numbers the same way Check reads text. Object keys are
// not facts.
func FactsOf(loc *time.Location, values ...any) (*Facts, error) {
	f := NewFacts(loc)
	for _, v := range values {
		if err := f.AddValue(v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// AddValue adds the facts of one value, as FactsOf does.
func (f *Facts) AddValue(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("facts: encode: %w", err)
	}
	var tree any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return fmt.Errorf("facts: decode: %w", err)
	}
	f.walk(tree)
	return nil
}

func (f *Facts) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			f.walk(x)
		}
	case []any:
		for _, x := range v {
			f.walk(x)
		}
	case json.Number:
		if x, err := v.Float64(); err == nil {
			f.AddNumber(x)
		}
	case string:
		f.AddText(v)
	}
}

// Location is the time zone the facts read timestamps in.
func (f *Facts) Location() *time.Location { return f.loc }

// SetToday anchors relative dates ("tomorrow", "next week") at t's date in
// the facts' location. It adds no date: today is a reference, not a fact.
func (f *Facts) SetToday(t time.Time) { f.today = civilOf(t.In(f.loc)) }

// AddNumber adds one number.
func (f *Facts) AddNumber(x float64) { f.numbers[math.Abs(x)] = true }

// AddDate adds the date of t, in the facts' location and in UTC.
func (f *Facts) AddDate(t time.Time) {
	if t.IsZero() {
		return
	}
	f.addCivil(civilOf(t.In(f.loc)))
	f.addCivil(civilOf(t.UTC()))
}

func (f *Facts) addCivil(c civilDate) {
	f.dates[c] = true
	f.monthDays[[2]int{int(c.m), c.d}] = true
	f.weekdays[time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC).Weekday()] = true
}

// AddText adds what a string states: a timestamp, or the dates, clock
// times and numbers written in it.
func (f *Facts) AddText(s string) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		f.AddDate(t)
		return
	}
	for _, tok := range scan(s) {
		switch tok.kind {
		case tokDate:
			if tok.year == 0 {
				f.monthDays[[2]int{int(tok.month), tok.day}] = true
				continue
			}
			f.addCivil(civilDate{tok.year, tok.month, tok.day})
		case tokClock:
			f.clocks[tok.text] = true
		case tokIdent:
			f.idents[strings.ToLower(tok.text)] = true
		case tokNumber:
			f.AddNumber(tok.value)
		}
	}
}

// UngroundedError lists what a text states that its data does not.
type UngroundedError struct {
	Tokens []string
}

func (e *UngroundedError) Error() string {
	return "prose states what the data does not: " + strings.Join(e.Tokens, ", ")
}

// Check returns nil when every number, date and clock time of text appears
// in facts, and an *UngroundedError naming the rest otherwise.
func Check(text string, f *Facts) error {
	var bad []string
	for _, tok := range scan(text) {
		if !f.grounds(tok) {
			bad = append(bad, tok.text)
		}
	}
	if len(bad) > 0 {
		return &UngroundedError{Tokens: bad}
	}
	return nil
}

func (f *Facts) grounds(t token) bool {
	switch t.kind {
	case tokDate:
		if t.year == 0 {
			return f.monthDays[[2]int{int(t.month), t.day}]
		}
		if f.dates[civilDate{t.year, t.month, t.day}] {
			return true
		}
		// 03/04/2026 reads either way round.
		return t.swappable && f.dates[civilDate{t.year, time.Month(t.day), int(t.month)}]
	case tokAmbiguousDate:
		return f.monthDays[[2]int{int(t.month), t.day}] || f.monthDays[[2]int{t.day, int(t.month)}]
	case tokWeekday:
		return f.weekdays[t.weekday]
	case tokClock:
		return f.clocks[t.text]
	case tokIdent:
		return f.idents[strings.ToLower(t.text)] || quantileNames[strings.ToLower(t.text)]
	case tokNumber:
		return f.groundsNumber(t)
	case tokRelative:
		return f.groundsRelative(t.text)
	}
	return false
}

// groundsRelative reports whether some date of the data falls in the span
// a relative date names, counted from today.
func (f *Facts) groundsRelative(text string) bool {
	if f.today == (civilDate{}) {
		return true
	}
	day := func(n int) time.Time { return time.Date(f.today.y, f.today.m, f.today.d+n, 12, 0, 0, 0, time.UTC) }
	words := strings.Fields(strings.ToLower(text))
	var from, to time.Time
	switch words[0] {
	case "tomorrow":
		from, to = day(1), day(1)
	case "yesterday":
		from, to = day(-1), day(-1)
	default:
		shift := map[string]int{"this": 0, "next": 1, "last": -1}[words[0]]
		if words[1] == "week" {
			monday := -((int(day(0).Weekday()) + 6) % 7)
			from, to = day(monday+7*shift), day(monday+7*shift+6)
		} else {
			from = time.Date(f.today.y, f.today.m+time.Month(shift), 1, 12, 0, 0, 0, time.UTC)
			to = from.AddDate(0, 1, -1)
		}
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if f.dates[civilOf(d)] {
			return true
		}
	}
	return false
}

func (f *Facts) groundsNumber(t token) bool {
	want := math.Abs(t.value)
	if f.numbers[want] {
		return true
	}
	scale := math.Pow(10, float64(t.decimals))
	round := func(x float64) float64 { return math.Round(x*scale) / scale }
	for x := range f.numbers {
		if round(x) == want || (t.percent && round(x*100) == want) {
			return true
		}
	}
	return false
}

func civilOf(t time.Time) civilDate {
	y, m, d := t.Date()
	return civilDate{y, m, d}
}

type tokenKind int

const (
	tokNumber tokenKind = iota
	tokDate
	tokAmbiguousDate // day and month known, order not: 03/04
	tokWeekday
	tokClock
	tokIdent    // a word with digits in it: v1.0, dev03, p80
	tokRelative // tomorrow, yesterday, this/next/last week or month
)

// quantileNames may be written without appearing in the data: they name
// the forecast's percentiles, not a figure.
var quantileNames = map[string]bool{"p10": true, "p50": true, "p80": true, "p90": true}

type token struct {
	kind      tokenKind
	text      string
	value     float64
	decimals  int
	percent   bool
	year      int
	month     time.Month
	day       int
	swappable bool
	weekday   time.Weekday
}

const monthNames = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?`

var (
	reISODate   = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})(?:T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?\b`)
	reSlashDate = regexp.MustCompile(`\b(\d{1,2})[/.](\d{1,2})(?:[/.](\d{4}|\d{2}))?\b`)
	reMonthDay  = regexp.MustCompile(`(?i)\b(` + monthNames + `)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`)
	reDayMonth  = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(` + monthNames + `)\b\.?(?:,?\s+(\d{4})\b)?`)
	reRelative  = regexp.MustCompile(`(?i)\b(?:tomorrow|yesterday|(?:this|next|last)\s+(?:week|month))\b`)
	reWeekday   = regexp.MustCompile(`(?i)\b(mon|tues|wednes|thurs|fri|satur|sun)day\b`)
	reClock     = regexp.MustCompile(`\b(\d{1,2}):(\d{2})\b`)
	reIdent     = regexp.MustCompile(`\b[A-Za-z][A-Za-z_]*[-_]?\d[\w.-]*`)
	reNumber    = regexp.MustCompile(`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`)
	reWord      = regexp.MustCompile(`(?i)\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b`)
)

var numberWords = map[string]float64{
	"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}

var weekdays = map[string]time.Weekday{
	"mon": time.Monday, "tues": time.Tuesday, "wednes": time.Wednesday, "thurs": time.Thursday,
	"fri": time.Friday, "satur": time.Saturday, "sun": time.Sunday,
}

func monthOf(s string) time.Month {
	s = strings.ToLower(s)
	for m := time.January; m <= time.December; m++ {
		if strings.HasPrefix(strings.ToLower(m.String()), s[:3]) {
			return m
		}
	}
	return 0
}

// scan finds the dates, clock times and numbers of s. Each part of s is
// read once: a date's digits are not read again as numbers.
func scan(s string) []token {
	var out []token
	used := make([]bool, len(s))
	take := func(loc []int) bool {
		for i := loc[0]; i < loc[1]; i++ {
			if used[i] {
				return false
			}
		}
		for i := loc[0]; i < loc[1]; i++ {
			used[i] = true
		}
		return true
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	validDay := func(m time.Month, d int) bool { return m >= 1 && m <= 12 && d >= 1 && d <= 31 }

	for _, m := range reISODate.FindAllStringSubmatchIndex(s, -1) {
		y, mo, d := atoi(s[m[2]:m[3]]), time.Month(atoi(s[m[4]:m[5]])), atoi(s[m[6]:m[7]])
		if validDay(mo, d) && take(m[:2]) {
			out = append(out, token{kind: tokDate, text: s[m[0]:m[1]], year: y, month: mo, day: d})
		}
	}
	// "Dec 1" and "1 December": the month is the first group or the second.
	for _, form := range []struct {
		re         *regexp.Regexp
		monthFirst bool
	}{{reMonthDay, true}, {reDayMonth, false}} {
		for _, m := range form.re.FindAllStringSubmatchIndex(s, -1) {
			month, day := s[m[2]:m[3]], s[m[4]:m[5]]
			if !form.monthFirst {
				month, day = day, month
			}
			mo, d := monthOf(month), atoi(day)
			if !validDay(mo, d) || !take(m[:2]) {
				continue
			}
			t := token{kind: tokDate, text: s[m[0]:m[1]], month: mo, day: d}
			if m[6] >= 0 {
				t.year = atoi(s[m[6]:m[7]])
			}
			out = append(out, t)
		}
	}
	for _, m := range reSlashDate.FindAllStringSubmatchIndex(s, -1) {
		a, b := atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]])
		// "3.5" is a number, not the 3rd of May: a dotted pair without a
		// year is left to the number scanner.
		if m[6] < 0 && s[m[3]] == '.' {
			continue
		}
		if !validDay(time.Month(a), b) && !validDay(time.Month(b), a) {
			continue
		}
		if !take(m[:2]) {
			continue
		}
		text := s[m[0]:m[1]]
		if m[6] < 0 {
			out = append(out, token{kind: tokAmbiguousDate, text: text, month: time.Month(a), day: b})
			continue
		}
		y := atoi(s[m[6]:m[7]])
		if y < 100 {
			y += 2000
		}
		// Prefer month/day; the other order is tried when checking.
		mo, d := time.Month(a), b
		if !validDay(mo, d) {
			mo, d = time.Month(b), a
		}
		out = append(out, token{kind: tokDate, text: text, year: y, month: mo, day: d,
			swappable: validDay(time.Month(b), a) && validDay(time.Month(a), b)})
	}
	for _, m := range reRelative.FindAllStringIndex(s, -1) {
		if take(m) {
			out = append(out, token{kind: tokRelative, text: s[m[0]:m[1]]})
		}
	}
	for _, m := range reWeekday.FindAllStringSubmatchIndex(s, -1) {
		if take(m[:2]) {
			out = append(out, token{kind: tokWeekday, text: s[m[0]:m[1]], weekday: weekdays[strings.ToLower(s[m[2]:m[3]])]})
		}
	}
	for _, m := range reClock.FindAllStringSubmatchIndex(s, -1) {
		h, mi := atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]])
		if h > 23 || mi > 59 || !take(m[:2]) {
			continue
		}
		out = append(out, token{kind: tokClock, text: fmt.Sprintf("%d:%02d", h, mi)})
	}
	for _, m := range reIdent.FindAllStringIndex(s, -1) {
		// A sentence's full stop is not part of the word.
		for m[1] > m[0] && strings.ContainsRune(".-_", rune(s[m[1]-1])) {
			m[1]--
		}
		if take(m) {
			out = append(out, token{kind: tokIdent, text: s[m[0]:m[1]]})
		}
	}
	for _, m := range reNumber.FindAllStringIndex(s, -1) {
		if !take(m) {
			continue
		}
		text := s[m[0]:m[1]]
		plain := strings.ReplaceAll(text, ",", "")
		v, err := strconv.ParseFloat(plain, 64)
		if err != nil {
			continue
		}
		t := token{kind: tokNumber, text: text, value: v}
		if i := strings.IndexByte(plain, '.'); i >= 0 {
			t.decimals = len(plain) - i - 1
		}
		if m[1] < len(s) && s[m[1]] == '%' {
			t.percent = true
			t.text += "%"
		}
		out = append(out, t)
	}
	for _, m := range reWord.FindAllStringIndex(s, -1) {
		if take(m) {
			w := s[m[0]:m[1]]
			out = append(out, token{kind: tokNumber, text: w, value: numberWords[strings.ToLower(w)]})
		}
	}
	return out
}
