package policies

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one line of a policy's schedule, assuming every attempt fails
// instantly (so the first failure is the first attempt).
type Row struct {
	Attempt int           `json:"attempt"` // 0 = first delivery, k = retry k
	Gap     time.Duration `json:"gap"`     // since the previous attempt
	Offset  time.Duration `json:"offset"`  // since the first failure
	// GapMin and GapMax are the jitter bounds of Gap (equal to it without jitter).
	GapMin time.Duration `json:"gap_min"`
	GapMax time.Duration `json:"gap_max"`
}

// maxRows bounds the table of a schedule that never ends.
const maxRows = 100

// Rows lists every attempt the policy allows, limited by MaxAttempts, by the
// end of the schedule and by the TTL (nominal waits, no jitter); an unbounded
// schedule stops at 100 rows. Workfront gives 12 rows, the last at offset
// 173,585.6 s (docs/policies.md#workfront).
func (p Policy) Rows() []Row {
	rows, _ := p.rowsAndEnd()
	return rows
}

// rowsAndEnd is Rows plus a sentence saying why the schedule ends there.
func (p Policy) rowsAndEnd() ([]Row, string) {
	rows := []Row{{Attempt: 0}}
	for k := 1; ; k++ {
		if len(rows) >= maxRows {
			return rows, fmt.Sprintf("table cut at %d rows; the schedule goes on", maxRows)
		}
		if p.MaxAttempts > 0 && k >= p.MaxAttempts {
			return rows, fmt.Sprintf("max attempts (%d deliveries) reached", p.MaxAttempts)
		}
		w, ok := p.Schedule.wait(k)
		if !ok {
			return rows, "the schedule has no more retries"
		}
		r := p.nextRow(rows[len(rows)-1], k, w)
		if p.TTL > 0 && r.Offset > p.TTL {
			return rows, fmt.Sprintf("TTL: retry %d would be due at %s, after the TTL of %s", k, fmtDur(r.Offset), fmtDur(p.TTL))
		}
		rows = append(rows, r)
	}
}

// nextRow is retry k's row, given the previous row and the schedule's wait w.
func (p Policy) nextRow(prev Row, k int, w time.Duration) Row {
	lo, hi := p.JitterBounds(w)
	if p.Schedule.Kind != Offsets {
		return Row{Attempt: k, Gap: w, Offset: satAdd(prev.Offset, w), GapMin: lo, GapMax: hi}
	}
	// w is an offset: the jitter moves it, and the previous one, independently;
	// Next never schedules a retry before the previous failure.
	plo, phi := p.JitterBounds(prev.Offset)
	return Row{Attempt: k, Gap: w - prev.Offset, Offset: w, GapMin: max(0, lo-phi), GapMax: max(0, hi-plo)}
}

// Render writes the policy as a text table: header lines with its numbers,
// then ATTEMPT, GAP, OFFSET (and GAP RANGE with jitter), then why it ends.
// Durations print as seconds with one decimal plus a human form, e.g.
// "84.8s (1m24.8s)" (docs/policies.md#workfront).
func Render(w io.Writer, p Policy) error {
	ew := &errWriter{w: w}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, kv := range p.headerLines() {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
	}
	rows, end := p.rowsAndEnd()
	jitter := p.JitterFraction > 0
	fmt.Fprint(tw, "\nATTEMPT\tGAP\tOFFSET")
	if jitter {
		fmt.Fprint(tw, "\tGAP RANGE")
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s", attemptLabel(r.Attempt), fmtDur(r.Gap), fmtDur(r.Offset))
		if jitter && r.Attempt > 0 {
			fmt.Fprintf(tw, "\t%s .. %s", fmtDur(r.GapMin), fmtDur(r.GapMax))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\nEnds: %s\n", end)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("render %s: %w", p.Name, err)
	}
	if ew.err != nil {
		return fmt.Errorf("render %s: %w", p.Name, ew.err)
	}
	return nil
}

// headerLines are the label/value pairs above the table.
func (p Policy) headerLines() [][2]string {
	maxAttempts, ttl, jitter := "no limit", "none", "none"
	if p.MaxAttempts > 0 {
		maxAttempts = fmt.Sprintf("%d (first delivery + %d retries)", p.MaxAttempts, p.MaxAttempts-1)
	}
	if p.TTL > 0 {
		ttl = fmtDur(p.TTL)
	}
	if p.JitterFraction > 0 {
		jitter = fmt.Sprintf("±%g%%", p.JitterFraction*100)
	}
	return [][2]string{
		{"Policy", p.Name},
		{"Section", p.Section},
		{"Description", p.Description},
		{"Schedule", string(p.Schedule.Kind)},
		{"Max attempts", maxAttempts},
		{"TTL", ttl},
		{"Timeout", fmtDur(p.Timeout)},
		{"Jitter", jitter},
		{"Success codes", codeList(p.SuccessCodes, "any 2xx")},
		{"Dead-letter codes", codeList(p.DeadLetterCodes, "none")},
		{"Dead lettering", fmt.Sprint(p.DeadLettering)},
		{"On exhausted", fmt.Sprintf("%s (final status %s)", p.OnExhausted, p.FinalStatus())},
	}
}

// attemptLabel names an attempt: "0 (first)" or "retry k".
func attemptLabel(k int) string {
	if k == 0 {
		return "0 (first)"
	}
	return fmt.Sprintf("retry %d", k)
}

// codeList prints status codes, or empty when there are none.
func codeList(codes []int, empty string) string {
	if len(codes) == 0 {
		return empty
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ", ")
}

// fmtDur prints d as seconds with one decimal plus a human form: "84.8s (1m24.8s)".
func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1fs (%v)", d.Seconds(), d.Round(time.Millisecond))
}

// errWriter keeps the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

// Write writes p unless an earlier write failed.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
