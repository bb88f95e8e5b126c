package where

import (
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzCols is the column map used by FuzzParse.
var fuzzCols = Columns{
	"channel":         "d.channel",
	"status":          "d.status",
	"config.url":      "s.url",
	"subscription.id": "d.subscription_id",
	"event.type":      "e.event_type",
	"event.time":      "e.occurred_at",
	"id":              "d.id",
}

// fragmentRE matches a whole SQL fragment built only from the columns of
// fuzzCols, $N placeholders, AND, IN, parentheses, commas, single spaces and
// the comparison operators.
var fragmentRE = func() *regexp.Regexp {
	var names []string
	for _, c := range fuzzCols {
		names = append(names, regexp.QuoteMeta(c))
	}
	sort.Strings(names)
	col := `(?:` + strings.Join(names, "|") + `)`
	ph := `\$[1-9][0-9]*`
	cmp := col + `(?: (?:=|<>|<|>|<=|>=) ` + ph + `| IN \(` + ph + `(?:, ` + ph + `)*\))`
	return regexp.MustCompile(`^` + cmp + `(?: AND ` + cmp + `)*$`)
}()

// placeholderRE finds the placeholders of a fragment.
var placeholderRE = regexp.MustCompile(`\$([0-9]+)`)

func FuzzParse(f *testing.F) {
	for _, tc := range validCases {
		f.Add(tc.in)
	}
	for _, tc := range invalidCases {
		f.Add(tc.in)
	}
	f.Add(repeatCmps(MaxCmps))
	f.Add(repeatValues(MaxValues))
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			checkFuzzError(t, s, err)
			return
		}
		checkTree(t, s, e)
		first := 1 + len(s)%7
		sql, args, err := e.SQL(fuzzCols, first)
		if err != nil {
			t.Fatalf("SQL(%q): %v", s, err)
		}
		checkFragment(t, sql, first, len(args))
		checkArgs(t, s, e, args)
		checkReparse(t, e)
	})
}

// checkFuzzError checks that a Parse error is a well-formed *SyntaxError.
func checkFuzzError(t *testing.T, s string, err error) {
	var se *SyntaxError
	if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
		t.Fatalf("Parse(%q): %v is not a *SyntaxError wrapping ErrSyntax", s, err)
	}
	if se.Pos < 0 || se.Pos > len(s) || se.Msg == "" {
		t.Fatalf("Parse(%q): bad error position or message: %d %q", s, se.Pos, se.Msg)
	}
	if want := " at character " + strconv.Itoa(se.Pos+1); !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Parse(%q): error %q does not end in %q", s, err, want)
	}
}

// checkTree checks the facts every parsed Expr must satisfy.
func checkTree(t *testing.T, s string, e Expr) {
	if len(s) > MaxLen || len(e.Cmps) == 0 || len(e.Cmps) > MaxCmps {
		t.Fatalf("Parse(%q): %d comparisons from %d bytes", s, len(e.Cmps), len(s))
	}
	last := -1
	for _, c := range e.Cmps {
		if c.Pos <= last || c.Pos >= len(s) {
			t.Fatalf("Parse(%q): position %d out of order", s, c.Pos)
		}
		last = c.Pos
		word := s[c.Pos:]
		if i := strings.IndexFunc(word, func(r rune) bool { return r < 128 && !isWordChar(byte(r)) }); i >= 0 {
			word = word[:i]
		}
		if f, ok := canonical(word); !ok || f != c.Field {
			t.Fatalf("Parse(%q): comparison at %d starts with %q, not field %s", s, c.Pos, word, c.Field)
		}
		if !opAllowed(c.Field, c.Op) || len(c.Values) == 0 || len(c.Values) > MaxValues ||
			(c.Op != "in" && len(c.Values) != 1) {
			t.Fatalf("Parse(%q): bad comparison %+v", s, c)
		}
	}
}

// checkFragment checks the SQL text against the strict grammar and that its
// placeholders are numbered first, first+1, ... for nargs args.
func checkFragment(t *testing.T, sql string, first, nargs int) {
	if !fragmentRE.MatchString(sql) {
		t.Fatalf("SQL fragment %q has unexpected text", sql)
	}
	phs := placeholderRE.FindAllStringSubmatch(sql, -1)
	if len(phs) != nargs {
		t.Fatalf("SQL fragment %q has %d placeholders for %d args", sql, len(phs), nargs)
	}
	for i, m := range phs {
		if m[1] != strconv.Itoa(first+i) {
			t.Fatalf("SQL fragment %q: placeholder %d is $%s, want $%d", sql, i, m[1], first+i)
		}
	}
}

// checkArgs checks that the args are exactly the quoted literals of the input,
// unescaped and in order: strings, or times for event.time.
func checkArgs(t *testing.T, s string, e Expr, args []any) {
	lits := literals(s)
	if len(lits) != len(args) {
		t.Fatalf("Parse(%q): %d literals in the input but %d args", s, len(lits), len(args))
	}
	i := 0
	for _, c := range e.Cmps {
		for _, v := range c.Values {
			if v != lits[i] {
				t.Fatalf("Parse(%q): value %q is not input literal %q", s, v, lits[i])
			}
			checkArg(t, s, c.Field, lits[i], args[i])
			i++
		}
	}
}

// checkArg checks one bound argument against the literal it came from.
func checkArg(t *testing.T, s, field, lit string, arg any) {
	switch a := arg.(type) {
	case string:
		if field == "event.time" || a != lit {
			t.Fatalf("Parse(%q): arg %q for %s, literal %q", s, a, field, lit)
		}
	case time.Time:
		want, err := time.Parse(time.RFC3339Nano, lit)
		if field != "event.time" || err != nil || !a.Equal(want) {
			t.Fatalf("Parse(%q): arg %v for %s, literal %q", s, a, field, lit)
		}
	default:
		t.Fatalf("Parse(%q): arg of type %T", s, arg)
	}
}

// literals returns the unescaped single-quoted literals of s, in order. In
// an input that parses, every quote belongs to a literal.
func literals(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(s); j++ {
			if s[j] == '\'' && j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j++
			} else if s[j] == '\'' {
				break
			} else {
				b.WriteByte(s[j])
			}
		}
		out = append(out, b.String())
		i = j
	}
	return out
}

// checkReparse renders e back to canonical text and checks that it parses
// to the same comparisons.
func checkReparse(t *testing.T, e Expr) {
	text := render(e)
	if len(text) > MaxLen {
		return
	}
	e2, err := Parse(text)
	if err != nil {
		t.Fatalf("rendered %q does not parse: %v", text, err)
	}
	if len(e2.Cmps) != len(e.Cmps) {
		t.Fatalf("rendered %q: %d comparisons, want %d", text, len(e2.Cmps), len(e.Cmps))
	}
	for i := range e.Cmps {
		a, b := e.Cmps[i], e2.Cmps[i]
		a.Pos, b.Pos = 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("rendered %q: comparison %d is %+v, want %+v", text, i, b, a)
		}
	}
}

// render writes e as a where clause in canonical form.
func render(e Expr) string {
	parts := make([]string, len(e.Cmps))
	for i, c := range e.Cmps {
		quoted := make([]string, len(c.Values))
		for j, v := range c.Values {
			quoted[j] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		if c.Op == "in" {
			parts[i] = c.Field + " in (" + strings.Join(quoted, ", ") + ")"
		} else {
			parts[i] = c.Field + " " + c.Op + " " + quoted[0]
		}
	}
	return strings.Join(parts, " and ")
}

func TestFragmentRE(t *testing.T) {
	t.Parallel()
	good := []string{"d.status = $1", "s.url IN ($2, $3) AND e.occurred_at >= $4"}
	bad := []string{
		"", "d.status = 'x'", "d.status = $1 OR 1=1", "d.status = $1;", "x = $1",
		"d.status = $0", "d.status IN ()", "d.status = $1 -- ", "d.status  = $1",
		"d.status = $1 AND", "d.status == $1",
	}
	for _, s := range good {
		if !fragmentRE.MatchString(s) {
			t.Errorf("fragmentRE rejects %q", s)
		}
	}
	for _, s := range bad {
		if fragmentRE.MatchString(s) {
			t.Errorf("fragmentRE accepts %q", s)
		}
	}
}
