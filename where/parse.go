package where

import (
	"strings"
	"time"
)

// parser is a recursive-descent parser over a lexer.
type parser struct {
	lx lexer
}

// expr parses cmp ("and" cmp)* up to the end of the input.
func (p *parser) expr() (Expr, error) {
	var e Expr
	for {
		c, err := p.cmp(len(e.Cmps))
		if err != nil {
			return Expr{}, err
		}
		e.Cmps = append(e.Cmps, c)
		more, err := p.joiner()
		if err != nil {
			return Expr{}, err
		}
		if !more {
			return e, nil
		}
	}
}

// joiner reads what follows a comparison: the end of the input (false) or
// the keyword and (true).
func (p *parser) joiner() (bool, error) {
	t, err := p.lx.next()
	switch {
	case err != nil:
		return false, err
	case t.kind == kEOF:
		return false, nil
	case t.kind == kWord && strings.EqualFold(t.text, "and"):
		return true, nil
	case t.kind == kWord && strings.EqualFold(t.text, "or"):
		return false, errAt(t.pos, `"or" is not supported; join comparisons with "and"`)
	}
	return false, errAt(t.pos, `unexpected trailing text %s after comparison; expected "and" or end of input`, describe(t))
}

// cmp parses one comparison; n is the number of comparisons before it.
func (p *parser) cmp(n int) (Cmp, error) {
	t, err := p.lx.next()
	switch {
	case err != nil:
		return Cmp{}, err
	case t.kind == kEOF && n == 0:
		return Cmp{}, errAt(t.pos, "empty where clause")
	case t.kind == kEOF:
		return Cmp{}, errAt(t.pos, `missing comparison after "and"`)
	case t.kind != kWord:
		return Cmp{}, errAt(t.pos, "expected a field name, found %s", describe(t))
	case n >= MaxCmps:
		return Cmp{}, errAt(t.pos, "too many comparisons (at most %d)", MaxCmps)
	}
	field, ok := canonical(t.text)
	if !ok {
		return Cmp{}, errAt(t.pos, "unknown field %s", clip(t.text))
	}
	op, err := p.op(field)
	if err != nil {
		return Cmp{}, err
	}
	var vals []string
	if op == "in" {
		vals, err = p.list(field)
	} else {
		vals, err = p.one(field, op)
	}
	if err != nil {
		return Cmp{}, err
	}
	return Cmp{Field: field, Op: op, Values: vals, Pos: t.pos}, nil
}

// op parses the operator after field and returns its canonical form.
func (p *parser) op(field string) (string, error) {
	t, err := p.lx.next()
	switch {
	case err != nil:
		return "", err
	case t.kind == kEOF:
		return "", errAt(t.pos, "missing operator after %s", field)
	case t.kind == kWord && strings.EqualFold(t.text, "in"):
		return "in", nil
	case t.kind != kWord && t.kind != kOp:
		return "", errAt(t.pos, "expected an operator after %s, found %s", field, describe(t))
	}
	op := t.text
	if op == "<>" {
		op = "!="
	}
	switch {
	case t.kind == kWord || !isOperator(op):
		return "", errAt(t.pos, "unsupported operator %s", clip(t.text))
	case !opAllowed(field, op):
		return "", errAt(t.pos, "unsupported operator %q for %s (only for event.time)", t.text, field)
	}
	return op, nil
}

// isOperator reports whether op is a canonical comparison operator.
func isOperator(op string) bool {
	switch op {
	case "=", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

// one parses the single value after op.
func (p *parser) one(field, op string) ([]string, error) {
	t, err := p.lx.next()
	if err != nil {
		return nil, err
	}
	if t.kind == kEOF {
		return nil, errAt(t.pos, "missing value after %s %s", field, op)
	}
	v, err := value(t, field)
	if err != nil {
		return nil, err
	}
	return []string{v}, nil
}

// list parses the parenthesised value list after in.
func (p *parser) list(field string) ([]string, error) {
	t, err := p.lx.next()
	if err != nil {
		return nil, err
	}
	if t.kind != kLParen {
		return nil, errAt(t.pos, `expected "(" after in, found %s`, describe(t))
	}
	var vals []string
	for {
		if t, err = p.lx.next(); err != nil {
			return nil, err
		}
		if err = listItem(t, len(vals)); err != nil {
			return nil, err
		}
		v, err := value(t, field)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		if t, err = p.lx.next(); err != nil {
			return nil, err
		}
		if t.kind == kRParen {
			return vals, nil
		}
		if t.kind != kComma {
			return nil, errAt(t.pos, `missing ")" to close the in list, found %s`, describe(t))
		}
	}
}

// listItem checks the token where the (n+1)-th value of an in list belongs.
func listItem(t token, n int) error {
	switch {
	case t.kind == kRParen && n == 0:
		return errAt(t.pos, "empty in list")
	case t.kind == kEOF && n == 0:
		return errAt(t.pos, `missing value and ")" after "in ("`)
	case t.kind == kEOF:
		return errAt(t.pos, `missing value and ")" after ","`)
	case n >= MaxValues:
		return errAt(t.pos, "too many values in the in list (at most %d)", MaxValues)
	}
	return nil
}

// value checks that t is a quoted literal valid for field and returns it.
func value(t token, field string) (string, error) {
	switch t.kind {
	case kString:
	case kWord:
		return "", errAt(t.pos, "unquoted value %s; values must be in single quotes", clip(t.text))
	default:
		return "", errAt(t.pos, "missing value, found %s", describe(t))
	}
	if field == "event.time" {
		if _, err := parseTime(t.text); err != nil {
			return "", errAt(t.pos, "event.time value %s is not an RFC 3339 time", clip(t.text))
		}
	}
	return t.text, nil
}

// parseTime parses an RFC 3339 time literal.
func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}
