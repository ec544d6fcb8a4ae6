package office

import (
	"math"
	"strconv"
	"time"
)

// dateKind is how a cell's style shows a number: as itself, or as a
// date, a time of day, or both.
type dateKind uint8

const (
	notDate dateKind = iota
	dateOnly
	timeOnly
	dateTime
)

// builtinKind is the kind of a built-in number format: 14–17 are dates,
// 18–21 times, 22 a date and time (ECMA-376 Part 1, 18.8.30).
func builtinKind(id int64) dateKind {
	switch {
	case id >= 14 && id <= 17:
		return dateOnly
	case id >= 18 && id <= 21:
		return timeOnly
	case id == 22:
		return dateTime
	}
	return notDate
}

// formatKind tells a custom format code's kind from the letters of its
// first section outside quoted text, escapes and [brackets]: y or d
// make a date, h or s a time (m is months or minutes, either way).
func formatKind(code string) dateKind {
	var date, clock bool
	quoted, bracket := false, false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quoted:
			quoted = c != '"'
		case bracket:
			bracket = c != ']'
		case c == '"':
			quoted = true
		case c == '[':
			bracket = true
		case c == '\\' || c == '_' || c == '*':
			i++ // the next character is literal (or padding)
		case c == ';':
			i = len(code)
		default:
			switch c | 0x20 {
			case 'y', 'd':
				date = true
			case 'h', 's':
				clock = true
			}
		}
	}
	switch {
	case date && clock:
		return dateTime
	case date:
		return dateOnly
	case clock:
		return timeOnly
	}
	return notDate
}

// excelDate shows a serial date as ISO 8601: 2006-01-02, 15:04:05 or
// 2006-01-02 15:04:05. The 1900 system counts 1900-02-29, which did not
// exist (Lotus 1-2-3's leap year): serials before it are a day later
// than days since 1899-12-30 make them.
func excelDate(v string, kind dateKind, date1904 bool) (string, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f >= 2958466 {
		return "", false
	}
	days := math.Floor(f)
	secs := math.Round((f - days) * 86400)
	if secs >= 86400 {
		days, secs = days+1, 0
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	phantom := false
	switch {
	case date1904:
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	case days == 60:
		phantom = true
	case days < 60:
		days++
	}
	t := base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	date, clock := t.Format("2006-01-02"), t.Format("15:04:05")
	if phantom {
		date = "1900-02-29"
	}
	switch kind {
	case dateOnly:
		return date, true
	case timeOnly:
		return clock, true
	}
	return date + " " + clock, true
}
