package prose

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type civilDate struct {
	y int
	m time.Month
	d int
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
	kind       tokenKind
	start, end int // byte offsets in the text
	text       string
	value      float64
	decimals   int
	percent    bool
	year       int
	month      time.Month
	day        int
	swappable  bool
	weekday    time.Weekday
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
// read once: a date's digits are not read again as numbers. used marks
// what was read already (mentions, status words); nil means nothing.
func scan(s string, used []bool) []token {
	var out []token
	if used == nil {
		used = make([]bool, len(s))
	}
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
			out = append(out, token{kind: tokDate, start: m[0], end: m[1], text: s[m[0]:m[1]], year: y, month: mo, day: d})
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
			if !validDay(mo, d) {
				continue
			}
			end, year := m[1], 0
			if m[6] >= 0 {
				year = atoi(s[m[6]:m[7]])
			}
			if !take([]int{m[0], end}) {
				// "Apr 22, 2026.12 release": the digits after the comma
				// are a name's, the date has no year.
				if m[6] < 0 {
					continue
				}
				end, year = m[5], 0
				if !form.monthFirst {
					end = m[3]
				}
				if !take([]int{m[0], end}) {
					continue
				}
			}
			out = append(out, token{kind: tokDate, start: m[0], end: end, text: s[m[0]:end], month: mo, day: d, year: year})
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
			out = append(out, token{kind: tokAmbiguousDate, start: m[0], end: m[1], text: text, month: time.Month(a), day: b})
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
		out = append(out, token{kind: tokDate, start: m[0], end: m[1], text: text, year: y, month: mo, day: d,
			swappable: validDay(time.Month(b), a) && validDay(time.Month(a), b)})
	}
	for _, m := range reRelative.FindAllStringIndex(s, -1) {
		if take(m) {
			out = append(out, token{kind: tokRelative, start: m[0], end: m[1], text: s[m[0]:m[1]]})
		}
	}
	for _, m := range reWeekday.FindAllStringSubmatchIndex(s, -1) {
		if take(m[:2]) {
			out = append(out, token{kind: tokWeekday, start: m[0], end: m[1], text: s[m[0]:m[1]], weekday: weekdays[strings.ToLower(s[m[2]:m[3]])]})
		}
	}
	for _, m := range reClock.FindAllStringSubmatchIndex(s, -1) {
		h, mi := atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]])
		if h > 23 || mi > 59 || !take(m[:2]) {
			continue
		}
		out = append(out, token{kind: tokClock, start: m[0], end: m[1], text: fmt.Sprintf("%d:%02d", h, mi)})
	}
	for _, m := range reIdent.FindAllStringIndex(s, -1) {
		// A sentence's full stop is not part of the word.
		for m[1] > m[0] && strings.ContainsRune(".-_", rune(s[m[1]-1])) {
			m[1]--
		}
		if take(m) {
			out = append(out, token{kind: tokIdent, start: m[0], end: m[1], text: s[m[0]:m[1]]})
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
		t := token{kind: tokNumber, start: m[0], end: m[1], text: text, value: v}
		if i := strings.IndexByte(plain, '.'); i >= 0 {
			t.decimals = len(plain) - i - 1
		}
		if m[1] < len(s) && s[m[1]] == '%' {
			t.percent = true
			t.text += "%"
			t.end++
		}
		out = append(out, t)
	}
	for _, m := range reWord.FindAllStringIndex(s, -1) {
		if take(m) {
			w := s[m[0]:m[1]]
			out = append(out, token{kind: tokNumber, start: m[0], end: m[1], text: w, value: numberWords[strings.ToLower(w)]})
		}
	}
	return out
}
