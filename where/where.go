// Package where parses the where clause of the SAP Open Connectors delivery
// queries (docs/policies.md#sap), for example
//
//	GET /notifications/subscriptions/deliveries?where=channel='webhook' and status='queued' and config.url='https://example.com/hook'
//
// into a small syntax tree ([Expr]) and compiles that tree into a
// parameterised SQL fragment ([Expr.SQL]). Nothing from the input is ever
// pasted into SQL: the fragment holds only the column expressions chosen by
// the caller, $N placeholders, AND, IN, parentheses, commas and comparison
// operators; every literal travels as a bound argument.
//
// Grammar (the keywords and, in and the field names are case-insensitive;
// whitespace may appear between any two tokens):
//
//	expr  := cmp ("and" cmp)*
//	cmp   := field op value | field "in" "(" value ("," value)* ")"
//	op    := "=" | "!=" | "<>" | "<" | ">" | "<=" | ">="
//	value := "'" (any character but a quote | "''")* "'"
//
// Fields: channel, status, config.url, subscription.id (alias
// subscription_id), event.type (alias event_type), event.time (alias
// event_time) and id. The ordering operators <, >, <= and >= apply to
// event.time only, and event.time literals must be RFC 3339 times.
// "or" is not supported.
package where

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on the input accepted by Parse.
const (
	// MaxLen is the longest where clause accepted, in bytes.
	MaxLen = 4096
	// MaxCmps is the largest number of comparisons in one where clause.
	MaxCmps = 32
	// MaxValues is the largest number of values in one in list.
	MaxValues = 100
)

// Cmp is one comparison of the where clause.
type Cmp struct {
	// Field is the canonical field name: channel, status, config.url,
	// subscription.id, event.type, event.time or id.
	Field string
	// Op is one of "=", "!=", "in", "<", ">", "<=", ">=".
	Op string
	// Values holds the unescaped literals: one, or one or more for "in".
	Values []string
	// Pos is the 0-based byte offset where the comparison starts.
	Pos int
}

// Expr is a parsed where clause: comparisons joined by and.
type Expr struct {
	// Cmps holds the comparisons in input order.
	Cmps []Cmp
}

// ErrSyntax is the error every *SyntaxError unwraps to, so that callers can
// test for a bad where clause with errors.Is.
var ErrSyntax = errors.New("invalid where clause")

// SyntaxError says what is wrong with a where clause and where.
type SyntaxError struct {
	// Pos is the 0-based byte offset of the offending character.
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Error reports the message and the 1-based character position, e.g.
// `where: unknown field "foo" at character 1`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("where: %s at character %d", e.Msg, e.Pos+1)
}

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// errAt builds a *SyntaxError at byte offset pos.
func errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a where clause. Any error it returns is a *SyntaxError.
func Parse(s string) (Expr, error) {
	if err := checkInput(s); err != nil {
		return Expr{}, err
	}
	p := parser{lx: lexer{s: s}}
	return p.expr()
}

// checkInput enforces the length limit and rejects input that no database
// text column could hold: invalid UTF-8 and NUL bytes.
func checkInput(s string) error {
	if len(s) > MaxLen {
		return errAt(MaxLen, "where clause longer than %d bytes", MaxLen)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return errAt(i, "invalid UTF-8")
		}
		if r == 0 {
			return errAt(i, "NUL character not allowed")
		}
		i += size
	}
	return nil
}

// fields maps every accepted field name and alias to its canonical name.
var fields = map[string]string{
	"channel":         "channel",
	"status":          "status",
	"config.url":      "config.url",
	"subscription.id": "subscription.id",
	"subscription_id": "subscription.id",
	"event.type":      "event.type",
	"event_type":      "event.type",
	"event.time":      "event.time",
	"event_time":      "event.time",
	"id":              "id",
}

// canonical returns the canonical name of field name, which is
// case-insensitive, and whether it is a known field.
func canonical(name string) (string, bool) {
	f, ok := fields[strings.ToLower(name)]
	return f, ok
}

// isKnownField reports whether f is a canonical field name.
func isKnownField(f string) bool {
	c, ok := fields[f]
	return ok && c == f
}

// opAllowed reports whether canonical op may be applied to canonical field.
func opAllowed(field, op string) bool {
	switch op {
	case "=", "!=", "in":
		return true
	case "<", ">", "<=", ">=":
		return field == "event.time"
	}
	return false
}
