package where

import (
	"fmt"
	"strconv"
	"strings"
)

// Columns maps canonical field names to SQL column expressions, chosen by
// the caller (trusted code), e.g. {"status": "d.status", "config.url": "s.url"}.
type Columns map[string]string

// sqlOps maps canonical comparison operators to their SQL spelling.
var sqlOps = map[string]string{
	"=": "=", "!=": "<>", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
}

// SQL compiles e into a fragment like `d.status = $3 AND s.url IN ($4, $5)`,
// numbering placeholders from firstArg, and returns the args: strings, or
// time.Time for event.time. A field missing from cols is an error, and so
// is an Expr that Parse could not have returned.
func (e Expr) SQL(cols Columns, firstArg int) (string, []any, error) {
	if len(e.Cmps) == 0 {
		return "", nil, fmt.Errorf("where: empty expression")
	}
	if len(e.Cmps) > MaxCmps {
		return "", nil, fmt.Errorf("where: too many comparisons (at most %d)", MaxCmps)
	}
	if firstArg < 1 {
		return "", nil, fmt.Errorf("where: first placeholder number %d is below 1", firstArg)
	}
	var b strings.Builder
	var args []any
	for i, c := range e.Cmps {
		col, vals, err := bind(c, cols)
		if err != nil {
			return "", nil, err
		}
		if i > 0 {
			b.WriteString(" AND ")
		}
		writeCmp(&b, col, c.Op, firstArg+len(args), len(vals))
		args = append(args, vals...)
	}
	return b.String(), args, nil
}

// bind checks c and returns its column and its bound arguments.
func bind(c Cmp, cols Columns) (string, []any, error) {
	col, ok := cols[c.Field]
	switch {
	case !isKnownField(c.Field):
		return "", nil, fmt.Errorf("where: unknown field %q", c.Field)
	case !ok || strings.TrimSpace(col) == "":
		return "", nil, fmt.Errorf("where: no column for field %q", c.Field)
	case !opAllowed(c.Field, c.Op):
		return "", nil, fmt.Errorf("where: operator %q not supported for %s", c.Op, c.Field)
	case c.Op == "in" && (len(c.Values) == 0 || len(c.Values) > MaxValues):
		return "", nil, fmt.Errorf("where: in list for %s needs 1 to %d values, has %d", c.Field, MaxValues, len(c.Values))
	case c.Op != "in" && len(c.Values) != 1:
		return "", nil, fmt.Errorf("where: operator %q for %s needs 1 value, has %d", c.Op, c.Field, len(c.Values))
	}
	args := make([]any, len(c.Values))
	for i, v := range c.Values {
		args[i] = v
		if c.Field != "event.time" {
			continue
		}
		t, err := parseTime(v)
		if err != nil {
			return "", nil, fmt.Errorf("where: event.time value %q is not an RFC 3339 time", v)
		}
		args[i] = t
	}
	return col, args, nil
}

// writeCmp writes `col op $n` or `col IN ($n, ..., $m)` for count values.
func writeCmp(b *strings.Builder, col, op string, n, count int) {
	b.WriteString(col)
	if op != "in" {
		b.WriteString(" " + sqlOps[op] + " $" + strconv.Itoa(n))
		return
	}
	b.WriteString(" IN (")
	for i := 0; i < count; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(n+i))
	}
	b.WriteString(")")
}
