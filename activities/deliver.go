package activities

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Deliver makes one HTTP attempt of a delivery and records it. Failures of
// the endpoint are results, not errors; an error means hookrelay itself failed.
// An endpoint that lets the attempt go and has no limits to check gets it
// with one statement before the request (store.BeginTarget), which also
// reads the delivery's status: an attempt of a delivery that has ended is
// never sent (DeliverResult.Ended).
func (a *Activities) Deliver(ctx context.Context, in workflows.DeliverInput) (workflows.DeliverResult, error) {
	failed := false // a request went out and failed
	if in.MayHandOver {
		sl, ok := a.Shares.take(in.EndpointID)
		if !ok {
			a.Store.HandOver(in.DeliveryID)
			return workflows.DeliverResult{HandedOver: true}, nil
		}
		ctx = withSending(ctx, func() func() { return a.Shares.sending(sl) })
		defer func() { a.Shares.done(in.EndpointID, sl, failed) }()
	}
	t, row, err := a.Store.BeginTarget(ctx, store.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt,
		ScheduledAt: in.ScheduledAt, StartedAt: time.Now()}, policies.AttemptStates(in.Probe), in.MayThrottle)
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	if row == 0 && t.Status.IsFinal() {
		// Ended already (a reset or replayed workflow, an operator's
		// action): never sent again.
		a.Logger.WarnContext(ctx, "attempt_of_ended_delivery", "delivery_id", in.DeliveryID, "status", t.Status)
		return workflows.DeliverResult{Ended: t.Status}, nil
	}
	if row == 0 && !policies.MayAttempt(t.EndpointState, in.Probe) {
		return workflows.DeliverResult{Skipped: true, EndpointState: t.EndpointState}, nil
	}
	body, err := a.requestBody(t)
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	finish := ""
	if in.FinishDelivered {
		finish = in.DeliveryID
	}
	var rec store.Attempt
	var done store.Completed
	if row != 0 {
		rec, done, err = a.sendBegun(ctx, t, in, body, []int64{row}, finish)
	} else {
		rec, done, err = a.send(ctx, t, in, body, []string{in.DeliveryID}, finish)
	}
	if res, ok := throttled(err); ok {
		return res, nil
	}
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	a.Logger.InfoContext(ctx, "attempt_made", "delivery_id", in.DeliveryID, "attempt", in.Attempt,
		"status_code", rec.StatusCode, "error_kind", rec.ErrorKind, "duration_ms", rec.DurationMs)
	res := resultOf(rec, done.Counters)
	failed = !rec.Success
	if !in.MayHandOver {
		a.Shares.answered(t.EndpointID, rec.Success, time.Duration(rec.DurationMs*float64(time.Millisecond)))
	}
	if done.Delivered != nil {
		a.finished(ctx, in.DeliveryID, policies.StatusDelivered, "", done.Delivered, "")
	}
	// Recorded as delivered with the attempt, or being recorded so
	// (FinishDelivered, Later): the workflow runs no Finish. Otherwise it
	// does.
	res.Finished = done.Delivered != nil || done.Later
	return res, nil
}

// send makes one request carrying body for the deliveries ids (one, or a
// batch's, in is the first's attempt), when the endpoint's limits leave room
// (else errThrottled): their attempts rows are written before it goes out
// (BeginAttempts), then sendBegun.
func (a *Activities) send(ctx context.Context, t store.Target, in workflows.DeliverInput, body []byte, ids []string, finish string) (store.Attempt, store.Completed, error) {
	release, err := a.leaseFor(ctx, t, in)
	if err != nil {
		return store.Attempt{}, store.Completed{}, err
	}
	defer release()
	rows, err := a.Store.BeginAttempts(ctx, attemptsOf(store.Attempt{Attempt: in.Attempt,
		ScheduledAt: in.ScheduledAt, StartedAt: time.Now()}, ids))
	if err != nil {
		return store.Attempt{}, store.Completed{}, err
	}
	return a.sendBegun(ctx, t, in, body, rows, finish)
}

// sendBegun sends the request whose open attempts rows are rows and
// completes them: it is counted once against the endpoint, its meaning for
// the endpoint's health is signalled, and it is measured. A success also
// records the delivery finish, if named, as delivered
// (store.CompleteAttempts).
func (a *Activities) sendBegun(ctx context.Context, t store.Target, in workflows.DeliverInput, body []byte, rows []int64, finish string) (store.Attempt, store.Completed, error) {
	var rec store.Attempt
	if in.LateAnswer > in.Timeout && in.Timeout > 0 && len(rows) == 1 {
		rec = a.postAllowingLate(ctx, t, in, body, rows[0])
	} else {
		rec = a.post(ctx, t, in, body)
	}
	if a.recordLater(t, in, rows, rec, finish) {
		return rec, store.Completed{Counters: store.Counters{EndpointID: t.EndpointID, State: t.EndpointState}, Later: true}, nil
	}
	done, err := a.Store.CompleteAttempts(ctx, t.EndpointID, rows, rec, finish)
	if err != nil {
		return store.Attempt{}, store.Completed{}, err
	}
	a.watchHealth(ctx, in, rec, done.Counters)
	a.measure(t, in, rec)
	return rec, done, nil
}

// measure counts the attempt rec of in to t in the metrics.
func (a *Activities) measure(t store.Target, in workflows.DeliverInput, rec store.Attempt) {
	a.Metrics.Attempt(rec.Success, rec.ErrorKind, time.Duration(rec.DurationMs*float64(time.Millisecond)),
		in.Attempt == 0, rec.StartedAt.Sub(t.CreatedAt))
}

// attemptsOf is rec as the attempt of each delivery a request carries, in
// order.
func attemptsOf(rec store.Attempt, ids []string) []store.Attempt {
	as := make([]store.Attempt, len(ids))
	for i, id := range ids {
		as[i] = rec
		as[i].DeliveryID = id
	}
	return as
}

// resultOf is what an attempt recorded as rec, after which the endpoint's
// counters are c, tells the workflow.
func resultOf(rec store.Attempt, c store.Counters) workflows.DeliverResult {
	return workflows.DeliverResult{
		EndpointState: c.State, StatusCode: rec.StatusCode, ErrorKind: rec.ErrorKind,
		Error: rec.ErrorMessage, DurationMs: rec.DurationMs, Success: rec.Success, Counters: countersOf(c),
		RetryAfter: rec.RetryAfter,
	}
}

// post sends body to the target's URL and describes what happened.
func (a *Activities) post(ctx context.Context, t store.Target, in workflows.DeliverInput, body []byte) store.Attempt {
	rec := store.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt, ScheduledAt: in.ScheduledAt}
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		rec.StartedAt, rec.ErrorKind, rec.ErrorMessage = time.Now(), workflows.KindNetwork, err.Error()
		return rec
	}
	setHeaders(req, t, in)
	rec.StartedAt = time.Now()
	sign(req, t, body, rec.StartedAt)
	answered := sendingNow(ctx)
	defer answered()
	resp, err := a.HTTP.Do(req)
	if err != nil {
		rec.DurationMs = msSince(rec.StartedAt)
		rec.ErrorKind, rec.ErrorMessage = errorKind(err), err.Error()
		return rec
	}
	defer resp.Body.Close()
	rec.StatusCode = resp.StatusCode
	rec.ResponseHeaders = headerJSON(resp.Header)
	prefix, err := a.readResponse(resp.Body)
	rec.DurationMs = msSince(rec.StartedAt)
	rec.ResponseBody = string(bytes.ToValidUTF8(prefix, []byte("?")))
	if err != nil {
		// A response not read whole within the timeout is a failed attempt,
		// whatever its status line said: no status code is judged.
		rec.ErrorKind = errorKind(err)
		rec.ErrorMessage = fmt.Sprintf("reading the response (%s): %v", resp.Status, err)
		rec.StatusCode = 0
		return rec
	}
	rec.Success = policies.IsSuccessCode(in.Success, resp.StatusCode)
	if wait := retryAfter(resp.StatusCode, resp.Header, time.Now()); wait > 0 {
		rec.RetryAfter = time.Now().Add(wait)
	}
	if !rec.Success {
		rec.ErrorKind, rec.ErrorMessage = workflows.KindHTTPStatus, resp.Status
	}
	return rec
}

// maxDrain bounds how much of a response body is read (and dropped) after
// the excerpt kept: a longer body is not read to its end.
const maxDrain = 1 << 20

// readResponse reads the excerpt kept of a response body and drains the
// rest (up to maxDrain), returning an error when the body could not be read
// to its end in time (the attempt's timeout ends it).
func (a *Activities) readResponse(body io.Reader) ([]byte, error) {
	prefix, err := io.ReadAll(io.LimitReader(body, int64(a.BodyLimit)))
	if err != nil {
		return prefix, err
	}
	_, err = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	return prefix, err
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func setHeaders(req *http.Request, t store.Target, in workflows.DeliverInput) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hookrelay/1")
	req.Header.Set(HeaderWebhookID, t.ExternalID)
	req.Header.Set("X-Hookrelay-Event-Type", t.EventType)
	req.Header.Set("X-Hookrelay-Delivery", t.DeliveryID)
	req.Header.Set("X-Hookrelay-Attempt", strconv.Itoa(in.Attempt+1))
	if eg := eventgrid.Of(t.Options); eg != nil {
		name := ""
		if t.SubscriptionName != nil {
			name = *t.SubscriptionName
		}
		eventgrid.SetHeaders(req.Header, eg, t.Outgoing(""), name, in.Attempt)
	}
}

// requestBody is the JSON the receiver gets for the target's event.
func (a *Activities) requestBody(t store.Target) ([]byte, error) {
	if eg := eventgrid.Of(t.Options); eg != nil {
		return a.eventGridBody([]store.Target{t}, eg)
	}
	b, err := json.Marshal(struct {
		ID      string          `json:"id"`
		Type    string          `json:"type"`
		Subject string          `json:"subject,omitempty"`
		Time    time.Time       `json:"time"`
		Data    json.RawMessage `json:"data"`
	}{t.ExternalID, t.EventType, t.Subject, t.OccurredAt, json.RawMessage(t.Data)})
	if err != nil {
		return nil, fmt.Errorf("activities: encode event %s: %w", t.ExternalID, err)
	}
	return b, nil
}

// HeaderBudget bounds the response headers kept with an attempt: names and
// first values, in name order, HeaderBudget bytes in all; what does not fit
// is cut, marked by TruncatedMarker (and the header TruncatedHeader counts
// the headers left out).
const (
	HeaderBudget    = 8 << 10
	TruncatedMarker = "...[truncated]"
	TruncatedHeader = "X-Hookrelay-Truncated"
)

func headerJSON(h http.Header) store.RawJSON {
	names := make([]string, 0, len(h))
	for k, v := range h {
		if len(v) > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	flat := make(map[string]string, len(names))
	left := HeaderBudget
	for i, k := range names {
		v := h[k][0]
		if len(k)+len(TruncatedMarker) >= left {
			flat[TruncatedHeader] = strconv.Itoa(len(names)-i) + " headers left out"
			break
		}
		if len(k)+len(v) > left {
			v = strings.ToValidUTF8(v[:left-len(k)-len(TruncatedMarker)], "") + TruncatedMarker
		}
		flat[k], left = v, left-len(k)-len(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(flat)
	return bytes.TrimSpace(b.Bytes())
}

// errorKind names the class of a transport error.
func errorKind(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return workflows.KindBlocked
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return workflows.KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return workflows.KindConnectionRefused
	case errors.As(err, &dnsErr):
		return workflows.KindDNS
	case errors.As(err, &certErr), errors.As(err, &recErr):
		return workflows.KindTLS
	default:
		return workflows.KindNetwork
	}
}

// countersOf is what the Deliver activity reports of the endpoint's counters.
func countersOf(c store.Counters) workflows.EndpointCounters {
	return workflows.EndpointCounters{
		EndpointID: c.EndpointID, State: c.State, Attempts: c.Attempts, Failures: c.Failures,
		ConsecutiveFailures: c.ConsecutiveFailures, LastSuccessAt: c.LastSuccessAt,
	}
}

// eventGridBody is the Event Grid request body of the targets' events.
func (a *Activities) eventGridBody(ts []store.Target, eg *eventgrid.Settings) ([]byte, error) {
	evs := make([]eventgrid.Outgoing, len(ts))
	for i, t := range ts {
		evs[i] = t.Outgoing(eventgrid.Topic(a.EventGridTopic, t.AccountID))
	}
	return eventgrid.Body(evs, eg)
}
