package scheduler

// Calendars: a person works one contiguous window a day, starting at
// WorkdayStartHour local time and lasting HoursPerDay focused hours, on the
// weekdays marked in WorkingDays, except holidays and time off (local
// dates). The zero Calendar is 6 hours Monday to Friday in UTC. A window
// starts at a fixed local hour so that time zones and daylight saving move it
// the way they move the person's real day.
//
// Two forms exist: the plain functions below walk the calendar day by day and
// serve rare questions (slack, what-if wording); a timeline precomputes the
// working windows over the forecast horizon so the Monte Carlo kernel converts
// between wall-clock time and working hours in O(1).

import (
	"math"
	"time"
)

// WorkdayStartHour is the local hour at which every working window starts.
const WorkdayStartHour = 9

// DefaultHoursPerDay is the focused hours of the zero Calendar.
const DefaultHoursPerDay = 6

// normalized fills in the zero Calendar's defaults field by field, so a
// calendar that only sets a time zone still works 6 hours Monday to Friday.
func (c Calendar) normalized() Calendar {
	if c.HoursPerDay <= 0 {
		c.HoursPerDay = DefaultHoursPerDay
	}
	if c.HoursPerDay > 24 {
		c.HoursPerDay = 24
	}
	any := false
	for _, d := range c.WorkingDays {
		any = any || d
	}
	if !any {
		for d := time.Monday; d <= time.Friday; d++ {
			c.WorkingDays[d] = true
		}
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	return c
}

// dateKey identifies a local date independent of its location.
type dateKey struct {
	y int
	m time.Month
	d int
}

func keyOf(t time.Time) dateKey { y, m, d := t.Date(); return dateKey{y, m, d} }

// offDates lists the local dates a calendar does not work despite its
// weekdays: holidays and every date inside a time-off range.
func (c Calendar) offDates() map[dateKey]bool {
	off := make(map[dateKey]bool, len(c.Holidays))
	for _, h := range c.Holidays {
		off[keyOf(h)] = true
	}
	for _, r := range c.TimeOff {
		from := time.Date(r.From.Year(), r.From.Month(), r.From.Day(), 12, 0, 0, 0, time.UTC)
		to := time.Date(r.To.Year(), r.To.Month(), r.To.Day(), 12, 0, 0, 0, time.UTC)
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			off[keyOf(d)] = true
		}
	}
	return off
}

// windowOn returns the working window of the local date y-m-d, or ok=false
// when that date is not worked.
func (c Calendar) windowOn(y int, m time.Month, d int, off map[dateKey]bool) (start, end time.Time, ok bool) {
	day := time.Date(y, m, d, WorkdayStartHour, 0, 0, 0, c.Location)
	if !c.WorkingDays[day.Weekday()] || off[dateKey{y, m, d}] {
		return time.Time{}, time.Time{}, false
	}
	return day, day.Add(time.Duration(c.HoursPerDay * float64(time.Hour))), true
}

// maxCalendarDays bounds the day-by-day walks, so a calendar that never
// works (all time off) ends instead of looping forever.
const maxCalendarDays = 366 * 30

// WorkingHoursBetween returns the focused hours the calendar works between a
// and b (negative when b is before a).
func WorkingHoursBetween(cal Calendar, a, b time.Time) float64 {
	if b.Before(a) {
		return -WorkingHoursBetween(cal, b, a)
	}
	c := cal.normalized()
	off := c.offDates()
	la := a.In(c.Location)
	// Start one day early: a window that started yesterday may still be open.
	day := time.Date(la.Year(), la.Month(), la.Day()-1, 12, 0, 0, 0, c.Location)
	var h float64
	for i := 0; i < maxCalendarDays; i++ {
		s, e, ok := c.windowOn(day.Year(), day.Month(), day.Day(), off)
		day = day.AddDate(0, 0, 1)
		if !ok {
			if s.After(b) {
				break
			}
			continue
		}
		if !s.Before(b) {
			break
		}
		if e.After(a) {
			lo, hi := maxTime(s, a), minTime(e, b)
			h += hi.Sub(lo).Hours()
		}
	}
	return h
}

// WorkingDaysBetween returns the working days (working hours over hours per
// day, fractional) between a and b, negative when b is before a.
func WorkingDaysBetween(cal Calendar, a, b time.Time) float64 {
	return WorkingHoursBetween(cal, a, b) / cal.normalized().HoursPerDay
}

// AddWorkingHours returns the moment the calendar has worked h focused hours
// after t. A zero h returns t unchanged; the result of a positive h is the end
// of the last hour worked, never the start of the next window.
func AddWorkingHours(cal Calendar, t time.Time, h float64) time.Time {
	if h <= 0 {
		return t
	}
	c := cal.normalized()
	off := c.offDates()
	lt := t.In(c.Location)
	day := time.Date(lt.Year(), lt.Month(), lt.Day()-1, 12, 0, 0, 0, c.Location)
	for i := 0; i < maxCalendarDays; i++ {
		s, e, ok := c.windowOn(day.Year(), day.Month(), day.Day(), off)
		day = day.AddDate(0, 0, 1)
		if !ok || !e.After(t) {
			continue
		}
		lo := maxTime(s, t)
		avail := e.Sub(lo).Hours()
		if h <= avail {
			return lo.Add(time.Duration(h * float64(time.Hour)))
		}
		h -= avail
	}
	return t.Add(time.Duration(h * float64(time.Hour)))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// timeline is a calendar's working windows from the forecast's origin on, in
// hours since the origin. Every window lasts hpd hours, so the working-hour
// coordinate u of window k's start is k*hpd: converting a working-hour amount
// to a wall-clock time is a division and one load. dayFirst maps whole days
// since the origin to the first window ending after that day's start, so the
// reverse conversion is one load and at most two steps forward.
type timeline struct {
	hpd, invHPD float64
	starts      []float64 // window k spans [starts[k], starts[k]+hpd)
	offsets     []float64 // starts[k] - k*hpd: wall clock = offsets[k] + u inside window k
	ends        []float64 // starts[k]+hpd, then two +Inf sentinels
	dayFirst    []int32
}

// newTimeline precomputes the calendar's windows from origin for at least
// horizonDays days. It steps through local dates with integer day numbers
// and asks the time zone for an offset only when a zone period (a daylight
// saving stretch) ends, so a year of windows costs microseconds; the result
// equals the day-by-day walk of windowOn.
func newTimeline(cal Calendar, origin time.Time, horizonDays int) *timeline {
	c := cal.normalized()
	off := make(map[int64]bool, len(c.Holidays))
	for _, h := range c.Holidays {
		off[dayNumber(h)] = true
	}
	for _, r := range c.TimeOff {
		for d := dayNumber(r.From); d <= dayNumber(r.To); d++ {
			off[d] = true
		}
	}
	lo := origin.In(c.Location)
	first := dayNumber(lo) - 1 // a window that started yesterday may still be open
	originSec, originNsec := origin.Unix(), origin.Nanosecond()
	var zoneOff, zoneStart, zoneEnd int64
	zoneAt := func(unix int64) {
		t := time.Unix(unix, 0).In(c.Location)
		_, o := t.Zone()
		zoneOff = int64(o)
		zs, ze := t.ZoneBounds()
		zoneStart, zoneEnd = math.MinInt64, math.MaxInt64
		if !zs.IsZero() {
			zoneStart = zs.Unix()
		}
		if !ze.IsZero() {
			zoneEnd = ze.Unix()
		}
	}
	zoneAt(first * 86400)
	hpdSec := c.HoursPerDay * 3600
	tl := &timeline{hpd: c.HoursPerDay, invHPD: 1 / c.HoursPerDay}
	tl.starts = make([]float64, 0, horizonDays*5/7+8)
	for i := int64(0); i < int64(horizonDays)+2 || (len(tl.starts) < 2 && i < maxCalendarDays); i++ {
		d := first + i
		if !c.WorkingDays[((d%7)+7+4)%7] || off[d] { // day 0, 1970-01-01, was a Thursday
			continue
		}
		local := d*86400 + WorkdayStartHour*3600
		utc := local - zoneOff
		if utc < zoneStart || utc >= zoneEnd {
			zoneAt(utc)
			utc = local - zoneOff
		}
		startH := (float64(utc-originSec) - float64(originNsec)/1e9) / 3600
		if startH*3600+hpdSec <= 0 {
			continue // ended before the origin
		}
		tl.starts = append(tl.starts, startH)
	}
	if len(tl.starts) < 2 {
		// Never works inside thirty years: pretend one window a week after them,
		// so the forecast shows a far date instead of failing.
		base := float64(maxCalendarDays * 24)
		tl.starts = append(tl.starts[:0], base, base+168)
	}
	n := len(tl.starts)
	tl.offsets = make([]float64, n)
	tl.ends = make([]float64, n, n+2)
	for k, st := range tl.starts {
		tl.offsets[k] = st - float64(k)*tl.hpd
		tl.ends[k] = st + tl.hpd
	}
	tl.ends = append(tl.ends, math.Inf(1), math.Inf(1))
	days := int(math.Ceil((tl.starts[n-1]+tl.hpd)/24)) + 1
	tl.dayFirst = make([]int32, days)
	k := 0
	for d := range tl.dayFirst {
		for k < n && tl.starts[k]+tl.hpd <= float64(d)*24 {
			k++
		}
		tl.dayFirst[d] = int32(k)
	}
	return tl
}

// working returns the working-hour coordinate of wall-clock hour t (t >= 0):
// the hours worked before t plus the hours of the windows before the first.
func (tl *timeline) working(t float64) float64 {
	d := int(t * (1.0 / 24))
	if uint(d) >= uint(len(tl.dayFirst)) {
		return tl.workingScan(t)
	}
	// Windows start once per local day, at least 23 hours apart, so at most
	// two of them end between the day's start and t: two steps find the
	// first window ending after t. Each step is the sign bit of t-ends[k]
	// (1 when ends[k] <= t), not a branch: t is a dependency's finish and
	// falls before or after a window end at random, so a branch would be
	// mispredicted half the time. ends carries two +Inf sentinels, so
	// neither step leaves it.
	k := int(tl.dayFirst[d])
	k += 1 - int(math.Float64bits(t-tl.ends[k])>>63)
	k += 1 - int(math.Float64bits(t-tl.ends[k])>>63)
	if k >= len(tl.starts) {
		return tl.workingScan(t)
	}
	// max(t-starts[k], 0), by masking off a negative value.
	xb := math.Float64bits(t - tl.starts[k])
	return float64(k)*tl.hpd + math.Float64frombits(xb&^uint64(int64(xb)>>63))
}

// workingScan is working by a plain scan from the day's first window, and
// past the horizon by extrapolation: the reference the fast path equals.
func (tl *timeline) workingScan(t float64) float64 {
	d := int(t * (1.0 / 24))
	if d >= len(tl.dayFirst) {
		return tl.workingBeyond(t)
	}
	k := int(tl.dayFirst[d])
	starts := tl.starts
	for k < len(starts) && starts[k]+tl.hpd <= t {
		k++
	}
	if k == len(starts) {
		return tl.workingBeyond(t)
	}
	x := t - starts[k]
	if x < 0 {
		x = 0
	}
	return float64(k)*tl.hpd + x
}

// workingBeyond extrapolates past the horizon as if the person worked
// around the clock. That is optimistic on purpose: a longer horizon (more
// work) can then only move dates later, never earlier, so extrapolation
// keeps "more work is never earlier" true. The horizon is sized so that it
// is reached only in far tails.
func (tl *timeline) workingBeyond(t float64) float64 {
	n := len(tl.starts)
	last := tl.starts[n-1] + tl.hpd
	return float64(n)*tl.hpd + (t - last)
}

// startAt returns the wall-clock hour at which working coordinate u is
// reached when work begins there: the start of the next window when u falls
// on a window boundary.
func (tl *timeline) startAt(u float64) float64 {
	k := int(u * tl.invHPD)
	if k >= len(tl.offsets) {
		return tl.wallBeyond(u)
	}
	return tl.offsets[k] + u
}

// finishAt returns the wall-clock hour at which working coordinate u is
// reached when work ends there: the end of a window, not the start of the
// next, when u falls on a boundary (u is nudged down by a nanosecond-sized
// amount before picking the window, which keeps the hot path branch-free).
func (tl *timeline) finishAt(u float64) float64 {
	k := int((u - boundaryNudge) * tl.invHPD)
	if uint(k) >= uint(len(tl.offsets)) {
		if k < 0 {
			k = 0
		} else {
			return tl.wallBeyond(u)
		}
	}
	return tl.offsets[k] + u
}

// boundaryNudge is far below the minute resolution of every output.
const boundaryNudge = 1e-9

func (tl *timeline) wallBeyond(u float64) float64 {
	n := len(tl.starts)
	last := tl.starts[n-1] + tl.hpd
	return last + (u - float64(n)*tl.hpd)
}
