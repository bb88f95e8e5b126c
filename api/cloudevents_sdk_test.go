package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// ceDelivery is an event the CloudEvents SDK received, with the request's
// Content-Type.
type ceDelivery struct {
	ev          cloudevents.Event
	contentType string
}

// ceSDKReceiver is a receiver built with the CloudEvents Go SDK: its HTTP
// protocol answers the webhook validation handshake (OPTIONS) for
// hookrelay's origin, and passes on the events it receives.
func ceSDKReceiver(t *testing.T) (*httptest.Server, <-chan ceDelivery) {
	t.Helper()
	p, err := cehttp.New(cehttp.WithDefaultOptionsHandlerFunc([]string{http.MethodPost}, 100, []string{eventgrid.RequestOrigin}, false))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan ceDelivery, 16)
	contentTypes := make(chan string, 16)
	h, err := cloudevents.NewHTTPReceiveHandler(context.Background(), p, func(ev cloudevents.Event) {
		got <- ceDelivery{ev: ev, contentType: <-contentTypes}
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			contentTypes <- r.Header.Get("Content-Type")
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// TestCloudEventsSDKReceives: a CloudEvents-schema Event Grid subscription
// whose receiver is the CloudEvents Go SDK passes the validation handshake
// (the SDK's OPTIONS handler) and then gets real deliveries in structured
// mode, one event a request, which the SDK decodes: attributes, extension
// and data; the event published in the Event Grid schema has the account's
// topic as its source.
func TestCloudEventsSDKReceives(t *testing.T) {
	t.Parallel()
	e, st := securedAPI(t)
	testenv.Worker(t, testenv.Client(t), st, worker.Options{HTTPConcurrency: 20})
	p := newPublisher(t, e, "cloudevents")
	srv, got := ceSDKReceiver(t)
	body := `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"` + srv.URL +
		`"}},"eventDeliverySchema":"CloudEventSchemaV1_0"}}`
	code, sub := sendCT(t, e, http.MethodPut, "/eventgrid/subscriptions/ce-sdk", "aeg-sas-key", p.key, "application/json", body)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	ce := `{"specversion":"1.0","id":"ce-1","source":"/shop","type":"order.created","subject":"/orders/1","tenant":"t1","data":{"order":1}}`
	if code, out := sendCT(t, e, http.MethodPost, "/eventgrid/events", "aeg-sas-key", p.key, eventgrid.ContentTypeCloudEvent, ce); code != http.StatusOK {
		t.Fatalf("publish a CloudEvent: %d %v", code, out)
	}
	eg := `[{"id":"eg-1","eventType":"order.created","subject":"/orders/2","eventTime":"2024-01-01T00:00:00Z","data":{"order":2}}]`
	if code, out := sendCT(t, e, http.MethodPost, "/eventgrid/events", "aeg-sas-key", p.key, "application/json", eg); code != http.StatusOK {
		t.Fatalf("publish an Event Grid event: %d %v", code, out)
	}
	byID := map[string]ceDelivery{}
	for _, d := range receive(t, "CloudEvents SDK deliveries", got, 2) {
		byID[d.ev.ID()] = d
		if !strings.HasPrefix(d.contentType, eventgrid.ContentTypeCloudEvent) || d.ev.Type() != "order.created" {
			t.Errorf("event %s: Content-Type %q, type %q: want structured mode", d.ev.ID(), d.contentType, d.ev.Type())
		}
	}
	var data1, data2 map[string]int
	c1, c2 := byID["ce-1"].ev, byID["eg-1"].ev
	if c1.DataAs(&data1) != nil || data1["order"] != 1 || c1.Source() != "/shop" || c1.Subject() != "/orders/1" ||
		c1.Extensions()["tenant"] != "t1" {
		t.Errorf("CloudEvent ce-1: %v", c1)
	}
	if c2.DataAs(&data2) != nil || data2["order"] != 2 || c2.Source() != eventgrid.Topic("", p.account) || c2.Subject() != "/orders/2" {
		t.Errorf("CloudEvent eg-1: %v", c2)
	}
	_, sub = sendCT(t, e, http.MethodGet, "/eventgrid/subscriptions/ce-sdk", "aeg-sas-key", p.key, "", "")
	if jpath(sub, "properties", "provisioningState") != "Succeeded" || jpath(sub, "properties", "hookrelay", "validation") != eventgrid.ValidationSucceeded {
		t.Errorf("after the handshake: %v", sub)
	}
}

// sendCT makes one request with one credential header and a Content-Type.
func sendCT(t *testing.T, h http.Handler, method, path, header, value, contentType, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if header != "" {
		req.Header.Set(header, value)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %d %q", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, out
}
