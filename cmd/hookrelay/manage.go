package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	hookrelay "github.com/hookrelay/hookrelay/client"
	"github.com/hookrelay/hookrelay/config"
)

// client is the API client of the management commands (kong binds it to
// their Run methods, making it only for them): HOOKRELAY_URL and
// HOOKRELAY_API_KEY.
func (e *session) client() (*hookrelay.Client, error) {
	cfg, err := config.LoadClient(e.getenv)
	if err != nil {
		return nil, err
	}
	return hookrelay.New(cfg.URL, cfg.APIKey)
}

// output is the flag of every management command.
type output struct {
	JSON bool `help:"Print the API's JSON answer as it is (for scripts)."`
}

// show prints the answer: its JSON body as it is with --json, else the
// table fill writes.
func (o output) show(e *session, resp hookrelay.Response, fill func(t *table)) error {
	if o.JSON {
		body := resp.GetBody()
		if _, err := e.stdout.Write(body); err != nil {
			return err
		}
		if len(body) > 0 && body[len(body)-1] != '\n' {
			_, err := io.WriteString(e.stdout, "\n")
			return err
		}
		return nil
	}
	t := newTable(e.stdout)
	fill(t)
	return t.flush()
}

// reply prints a generated operation's answer, or returns its error (the
// API's, as hookrelay.Check makes it):
//
//	return reply(e, c.output, func(t *table, r *hookrelay.GetEventResponse) { … })(api.GetEventWithResponse(e.ctx, id))
func reply[R hookrelay.Response](e *session, o output, fill func(t *table, r R)) func(R, error) error {
	return func(resp R, err error) error {
		if resp, err = hookrelay.Check(resp, err); err != nil {
			return err
		}
		return o.show(e, resp, func(t *table) { fill(t, resp) })
	}
}

// table writes aligned columns.
type table struct{ w *tabwriter.Writer }

func newTable(w io.Writer) *table { return &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)} }

// row writes one line of cells.
func (t *table) row(cells ...any) {
	text := make([]string, len(cells))
	for i, c := range cells {
		text[i] = cell(c)
	}
	fmt.Fprintln(t.w, strings.Join(text, "\t"))
}

// gap ends the columns above (a new block gets its own widths) with an
// empty line.
func (t *table) gap() {
	_ = t.w.Flush()
	fmt.Fprintln(t.w)
}

func (t *table) flush() error { return t.w.Flush() }

// cell is a value as a table shows it: "-" for nothing.
func cell(v any) string {
	var s string
	switch v := v.(type) {
	case *string:
		if v != nil {
			s = *v
		}
	case time.Time:
		if !v.IsZero() {
			s = v.UTC().Format(time.RFC3339)
		}
	case *time.Time:
		if v != nil {
			return cell(*v)
		}
	case *int:
		if v != nil {
			s = fmt.Sprint(*v)
		}
	case []string:
		s = strings.Join(v, ",")
	default:
		s = fmt.Sprint(v)
	}
	s = strings.Join(strings.Fields(s), " ") // one line, whatever the API says
	if s == "" {
		return "-"
	}
	return s
}

// moment is a time flag: an RFC 3339 time, or a duration before now
// ("90m", "2h", "72h").
type moment struct{ time.Time }

// Decode reads the flag's value.
func (m *moment) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("time", &s); err != nil {
		return err
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		m.Time = time.Now().Add(-d)
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("%q: want an RFC 3339 time (2025-01-02T15:04:05Z) or a duration before now (2h)", s)
	}
	m.Time = t
	return nil
}

// ptr is the moment's time, nil when the flag was not given.
func (m *moment) ptr() *time.Time {
	if m == nil || m.IsZero() {
		return nil
	}
	t := m.Time
	return &t
}

// some is a pointer to v, nil for the zero value (an absent flag).
func some[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// page is the paging flags of the list commands.
type page struct {
	Limit  int    `placeholder:"N" help:"At most this many (1-1000; the API's default is 100)."`
	Cursor string `placeholder:"CURSOR" help:"The next page: the cursor the previous one printed."`
}

// more says where the next page starts, after a table.
func more(t *table, cursor string) {
	if cursor != "" {
		t.gap()
		t.row("more: --cursor " + cursor)
	}
}
