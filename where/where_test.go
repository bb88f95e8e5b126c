package where

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testCols is the column map used by the table tests.
var testCols = Columns{
	"channel":         "d.channel",
	"status":          "d.status",
	"config.url":      "s.url",
	"subscription.id": "d.subscription_id",
	"event.type":      "e.type",
	"event.time":      "e.occurred_at",
	"id":              "d.id",
}

// validCase is a where clause that parses, with its tree and SQL.
type validCase struct {
	in    string
	first int
	want  []Cmp
	sql   string
	args  []any
}

// mustTime parses an RFC 3339 time or panics.
func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

var validCases = []validCase{
	{
		in:    "channel='webhook' and status='queued' and config.url='https://example.com/hook'",
		first: 1,
		want: []Cmp{
			{Field: "channel", Op: "=", Values: []string{"webhook"}, Pos: 0},
			{Field: "status", Op: "=", Values: []string{"queued"}, Pos: 22},
			{Field: "config.url", Op: "=", Values: []string{"https://example.com/hook"}, Pos: 42},
		},
		sql:  "d.channel = $1 AND d.status = $2 AND s.url = $3",
		args: []any{"webhook", "queued", "https://example.com/hook"},
	},
	{
		in:    "status in ('queued', 'failed')",
		first: 3,
		want:  []Cmp{{Field: "status", Op: "in", Values: []string{"queued", "failed"}}},
		sql:   "d.status IN ($3, $4)",
		args:  []any{"queued", "failed"},
	},
	{
		in:    "STATUS IN('queued')AND Channel='webhook'",
		first: 1,
		want: []Cmp{
			{Field: "status", Op: "in", Values: []string{"queued"}},
			{Field: "channel", Op: "=", Values: []string{"webhook"}, Pos: 23},
		},
		sql:  "d.status IN ($1) AND d.channel = $2",
		args: []any{"queued", "webhook"},
	},
	{
		in:    "status <> 'done' aNd channel!='email'",
		first: 2,
		want: []Cmp{
			{Field: "status", Op: "!=", Values: []string{"done"}},
			{Field: "channel", Op: "!=", Values: []string{"email"}, Pos: 21},
		},
		sql:  "d.status <> $2 AND d.channel <> $3",
		args: []any{"done", "email"},
	},
	{
		in:    "subscription_id='s1' and event_type='order.created' and event_time>='2024-01-02T03:04:05Z'",
		first: 1,
		want: []Cmp{
			{Field: "subscription.id", Op: "=", Values: []string{"s1"}},
			{Field: "event.type", Op: "=", Values: []string{"order.created"}, Pos: 25},
			{Field: "event.time", Op: ">=", Values: []string{"2024-01-02T03:04:05Z"}, Pos: 56},
		},
		sql:  "d.subscription_id = $1 AND e.type = $2 AND e.occurred_at >= $3",
		args: []any{"s1", "order.created", mustTime("2024-01-02T03:04:05Z")},
	},
	{
		in:    "event.time>'2024-01-01T00:00:00Z' and event.time<'2024-01-03T00:00:00.5+02:00' and event.time<='2024-02-01T00:00:00Z'",
		first: 1,
		want: []Cmp{
			{Field: "event.time", Op: ">", Values: []string{"2024-01-01T00:00:00Z"}},
			{Field: "event.time", Op: "<", Values: []string{"2024-01-03T00:00:00.5+02:00"}, Pos: 38},
			{Field: "event.time", Op: "<=", Values: []string{"2024-02-01T00:00:00Z"}, Pos: 83},
		},
		sql: "e.occurred_at > $1 AND e.occurred_at < $2 AND e.occurred_at <= $3",
		args: []any{mustTime("2024-01-01T00:00:00Z"), mustTime("2024-01-03T00:00:00.5+02:00"),
			mustTime("2024-02-01T00:00:00Z")},
	},
	{
		in:    "event_time in ('2024-01-01T00:00:00Z') and subscription.id = 'x'",
		first: 1,
		want: []Cmp{
			{Field: "event.time", Op: "in", Values: []string{"2024-01-01T00:00:00Z"}},
			{Field: "subscription.id", Op: "=", Values: []string{"x"}, Pos: 43},
		},
		sql:  "e.occurred_at IN ($1) AND d.subscription_id = $2",
		args: []any{mustTime("2024-01-01T00:00:00Z"), "x"},
	},
	{
		in:    "id = 'it''s'",
		first: 1,
		want:  []Cmp{{Field: "id", Op: "=", Values: []string{"it's"}}},
		sql:   "d.id = $1",
		args:  []any{"it's"},
	},
	{
		in:    "\t status\n=\r\n'queued' \n",
		first: 1,
		want:  []Cmp{{Field: "status", Op: "=", Values: []string{"queued"}, Pos: 2}},
		sql:   "d.status = $1",
		args:  []any{"queued"},
	},
	{
		in:    "status='a' and status='b'",
		first: 1,
		want: []Cmp{
			{Field: "status", Op: "=", Values: []string{"a"}},
			{Field: "status", Op: "=", Values: []string{"b"}, Pos: 15},
		},
		sql:  "d.status = $1 AND d.status = $2",
		args: []any{"a", "b"},
	},
	{
		in:    "status='' and config.url = 'https://ex.com/ü?a=1&b=(2),x and y'",
		first: 1,
		want: []Cmp{
			{Field: "status", Op: "=", Values: []string{""}},
			{Field: "config.url", Op: "=", Values: []string{"https://ex.com/ü?a=1&b=(2),x and y"}, Pos: 14},
		},
		sql:  "d.status = $1 AND s.url = $2",
		args: []any{"", "https://ex.com/ü?a=1&b=(2),x and y"},
	},
	// Injection attempts that are well-formed literals: carried only as args.
	{
		in:    "status='a'' or ''1''=''1'",
		first: 1,
		want:  []Cmp{{Field: "status", Op: "=", Values: []string{"a' or '1'='1"}}},
		sql:   "d.status = $1",
		args:  []any{"a' or '1'='1"},
	},
	{
		in:    "config.url='x''; drop table deliveries; --'",
		first: 1,
		want:  []Cmp{{Field: "config.url", Op: "=", Values: []string{"x'; drop table deliveries; --"}}},
		sql:   "s.url = $1",
		args:  []any{"x'; drop table deliveries; --"},
	},
	{
		in:    "status in ('queued'') or 1=1 --', '$1')",
		first: 1,
		want:  []Cmp{{Field: "status", Op: "in", Values: []string{"queued') or 1=1 --", "$1"}}},
		sql:   "d.status IN ($1, $2)",
		args:  []any{"queued') or 1=1 --", "$1"},
	},
}

func TestParseValid(t *testing.T) {
	t.Parallel()
	for _, tc := range validCases {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(e, Expr{Cmps: tc.want}) {
			t.Errorf("Parse(%q) =\n  %+v\nwant\n  %+v", tc.in, e.Cmps, tc.want)
		}
		sql, args, err := e.SQL(testCols, tc.first)
		if err != nil {
			t.Errorf("SQL(%q): %v", tc.in, err)
			continue
		}
		if sql != tc.sql {
			t.Errorf("SQL(%q) = %q, want %q", tc.in, sql, tc.sql)
		}
		if !reflect.DeepEqual(args, tc.args) {
			t.Errorf("SQL(%q) args = %#v, want %#v", tc.in, args, tc.args)
		}
	}
}

// invalidCase is a where clause that Parse rejects.
type invalidCase struct {
	in  string
	pos int
	msg string
}

var invalidCases = []invalidCase{
	{"", 0, "empty where clause"},
	{"  \t", 3, "empty where clause"},
	{"foo='x'", 0, `unknown field "foo"`},
	{"status='a' and foo='b'", 15, `unknown field "foo"`},
	{"status='a' and and status='b'", 15, `unknown field "and"`},
	{"status", 6, "missing operator after status"},
	{"status 'x'", 7, "expected an operator after status, found quoted value"},
	{"status like 'x'", 7, `unsupported operator "like"`},
	{"status not in ('a')", 7, `unsupported operator "not"`},
	{"status == 'x'", 7, `unsupported operator "=="`},
	{"status!'x'", 6, `unsupported operator "!"`},
	{"status < 'x'", 7, `unsupported operator "<" for status`},
	{"channel >= 'a'", 8, `unsupported operator ">=" for channel`},
	{"status=", 7, "missing value after status ="},
	{"status=('x')", 7, `missing value, found "("`},
	{"status='queued", 7, "unterminated quoted value"},
	{"status='it''s", 7, "unterminated quoted value"},
	{"status 'x", 7, "unterminated quoted value"},
	{"status='a' 'b", 11, "unterminated quoted value"},
	{"status in 'x", 10, "unterminated quoted value"},
	{"status in ('a", 11, "unterminated quoted value"},
	{"status in ('a' 'b", 15, "unterminated quoted value"},
	{"status=queued", 7, `unquoted value "queued"`},
	{`status="queued"`, 7, "values must be in single quotes"},
	{"event.time > '2024-13-01T00:00:00Z'", 13, "not an RFC 3339 time"},
	{"event.time > '2024-01-01'", 13, "not an RFC 3339 time"},
	{"event_time in ('2024-01-01T00:00:00Z', 'yesterday')", 39, `"yesterday" is not an RFC 3339 time`},
	{"status in ()", 11, "empty in list"},
	{"status in", 9, `expected "(" after in, found end of input`},
	{"status in 'a'", 10, `expected "(" after in`},
	{"status in (", 11, `missing value and ")"`},
	{"status in ('a',", 15, `missing value and ")" after ","`},
	{"status in ('a',)", 15, `missing value, found ")"`},
	{"status in ('a', b)", 16, `unquoted value "b"`},
	{"status in ('a', 'b'", 19, `missing ")" to close the in list, found end of input`},
	{"status in ('a' 'b')", 15, `missing ")"`},
	{"status in ('a', 'b'; drop", 19, `missing ")" to close the in list, found ";"`},
	{"status='a' channel='b'", 11, `unexpected trailing text "channel"`},
	{"status='x'--", 10, `unexpected trailing text "--"`},
	{"status='a' and", 14, `missing comparison after "and"`},
	{"status='a' or channel='b'", 11, `"or" is not supported`},
	{"'x'='y'", 0, "expected a field name, found quoted value"},
	{"(status='x')", 0, `expected a field name, found "("`},
	{"status='\xff'", 8, "invalid UTF-8"},
	{"status='a\x00'", 9, "NUL character not allowed"},
	// Classic injection strings.
	{"' or 1=1 --", 0, "unterminated quoted value"},
	{"status='queued'; drop table deliveries; --", 15, `unexpected trailing text ";"`},
	{"status='x' or 1=1", 11, `"or" is not supported`},
	{"status='x' OR 'a'='a'", 11, `"or" is not supported`},
	{"status = 'x' and 1=1", 17, `unknown field "1"`},
	{"status='x'/**/or/**/1=1", 10, `unexpected trailing text "/**/or/**/1"`},
	{"status=queued", 7, "unquoted value"},
	{"status=''; delete from deliveries", 9, `unexpected trailing text ";"`},
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range invalidCases {
		e, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want error", tc.in, e)
			continue
		}
		checkSyntaxError(t, tc.in, err, tc.pos, tc.msg)
	}
}

// checkSyntaxError checks that err is a *SyntaxError at pos containing msg.
func checkSyntaxError(t *testing.T, in string, err error, pos int, msg string) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
		t.Errorf("Parse(%q): error %v is not a *SyntaxError wrapping ErrSyntax", in, err)
		return
	}
	if se.Pos != pos || !strings.Contains(se.Msg, msg) {
		t.Errorf("Parse(%q): got %d %q, want %d %q", in, se.Pos, se.Msg, pos, msg)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := Parse("foo='x'")
	if got, want := err.Error(), `where: unknown field "foo" at character 1`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	_, err = Parse(strings.Repeat("x", 100) + "='a'")
	if want := `"` + strings.Repeat("x", 32) + `"...`; !strings.Contains(err.Error(), want) {
		t.Errorf("long field not clipped: %v", err)
	}
	_, err = Parse("x" + strings.Repeat("ü", 20) + "='a'")
	if want := `"x` + strings.Repeat("ü", 15) + `"...`; !strings.Contains(err.Error(), want) {
		t.Errorf("long field not clipped on a rune boundary: %v", err)
	}
}

// repeatCmps returns n comparisons status='v' joined by and.
func repeatCmps(n int) string {
	return strings.TrimSuffix(strings.Repeat("status='v' and ", n), " and ")
}

// repeatValues returns status in (...) with n values.
func repeatValues(n int) string {
	return "status in (" + strings.TrimSuffix(strings.Repeat("'v', ", n), ", ") + ")"
}

func TestLimits(t *testing.T) {
	t.Parallel()
	long := "status='" + strings.Repeat("x", MaxLen-9) + "'"
	for _, in := range []string{long, repeatCmps(MaxCmps), repeatValues(MaxValues)} {
		if _, err := Parse(in); err != nil {
			t.Errorf("Parse(%.40q...): %v", in, err)
		}
	}
	checks := []invalidCase{
		{long + " ", MaxLen, "longer than 4096 bytes"},
		{repeatCmps(MaxCmps + 1), MaxCmps * 15, "too many comparisons (at most 32)"},
		{repeatValues(MaxValues + 1), 11 + MaxValues*5, "too many values in the in list (at most 100)"},
	}
	for _, tc := range checks {
		_, err := Parse(tc.in)
		checkSyntaxError(t, tc.in, err, tc.pos, tc.msg)
	}
}

// sqlErrCase is an Expr, or arguments, that Expr.SQL rejects.
type sqlErrCase struct {
	name  string
	e     Expr
	cols  Columns
	first int
	msg   string
}

func TestSQLErrors(t *testing.T) {
	t.Parallel()
	ok := Cmp{Field: "status", Op: "=", Values: []string{"x"}}
	many, _ := Parse(repeatCmps(MaxCmps))
	many.Cmps = append(many.Cmps, ok)
	cases := []sqlErrCase{
		{"too many", many, testCols, 1, "too many comparisons"},
		{"empty", Expr{}, testCols, 1, "empty expression"},
		{"first arg", Expr{Cmps: []Cmp{ok}}, testCols, 0, "below 1"},
		{"no column", Expr{Cmps: []Cmp{ok}}, Columns{"channel": "d.channel"}, 1, `no column for field "status"`},
		{"blank column", Expr{Cmps: []Cmp{ok}}, Columns{"status": " "}, 1, `no column for field "status"`},
		{"unknown field", Expr{Cmps: []Cmp{{Field: "x", Op: "=", Values: []string{"a"}}}}, Columns{"x": "x"}, 1, "unknown field"},
		{"alias field", Expr{Cmps: []Cmp{{Field: "event_type", Op: "=", Values: []string{"a"}}}}, Columns{"event_type": "t"}, 1, "unknown field"},
		{"bad op", Expr{Cmps: []Cmp{{Field: "status", Op: "like", Values: []string{"a"}}}}, testCols, 1, "not supported"},
		{"order op", Expr{Cmps: []Cmp{{Field: "status", Op: "<", Values: []string{"a"}}}}, testCols, 1, "not supported"},
		{"no values", Expr{Cmps: []Cmp{{Field: "status", Op: "=", Values: nil}}}, testCols, 1, "needs 1 value"},
		{"empty in", Expr{Cmps: []Cmp{{Field: "status", Op: "in"}}}, testCols, 1, "needs 1 to 100 values"},
		{"bad time", Expr{Cmps: []Cmp{{Field: "event.time", Op: "=", Values: []string{"now"}}}}, testCols, 1, "RFC 3339"},
	}
	for _, tc := range cases {
		sql, args, err := tc.e.SQL(tc.cols, tc.first)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: SQL = %q, %v, %v; want error containing %q", tc.name, sql, args, err, tc.msg)
		}
	}
}
