package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/messaging"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/eventgrid/azeventgrid"
	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

const testSASSecret = "test-eventgrid-sas-secret-0123456789abcdef"

// azureAPI is the API as `hookrelay api` serves it (credentials required,
// SAS tokens on) behind a real TLS listener, with a real worker whose
// accounts' topics follow topicTemplate.
func azureAPI(t *testing.T, topicTemplate string) (*httptest.Server, *echo.Echo) {
	t.Helper()
	st, c := testenv.Store(t), testenv.Client(t)
	e := validated(t, &Server{Store: st, Temporal: c, Logger: testenv.Logger(), Starter: testenv.Starter(t, c, st),
		Auth: Auth{AdminKey: testAdminKey, SASSecret: testSASSecret}, Egress: testenv.Egress()})
	testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 20, EventGridTopic: topicTemplate})
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	return srv, e
}

// publisher is an account with an API key, as the admin key makes them.
type publisher struct{ account, keyID, key, sasKey string }

func newPublisher(t *testing.T, e *echo.Echo, name string) publisher {
	t.Helper()
	id, auth := newAccountKey(t, e, name)
	code, key := send(t, e, http.MethodPost, "/v1/accounts/"+id+"/keys", "Bearer "+testAdminKey, `{"name":"azure"}`)
	p := publisher{account: id, keyID: str(key["id"]), key: str(key["key"]), sasKey: str(key["eventgrid_sas_key"])}
	if code != http.StatusCreated || p.sasKey == "" || auth == "Bearer "+p.key {
		t.Fatalf("create key: %d %v", code, key)
	}
	return p
}

// azureSAS is a SAS token in Azure's format, signed as Azure's SDKs sign
// them (their key decoded from base64): r=<resource>&e=<expiry>&s=<HMAC>,
// each URL-encoded, the expiry in RFC 3339 as the Go SDK's own tests write
// it.
func azureSAS(resource, key string, expires time.Time) string {
	signed := "r=" + url.QueryEscape(resource) + "&e=" + url.QueryEscape(expires.UTC().Format(time.RFC3339))
	raw, _ := base64.StdEncoding.DecodeString(key)
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(signed))
	return signed + "&s=" + url.QueryEscape(base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

// azureOptions makes Azure's client trust the test server's certificate.
func azureOptions(srv *httptest.Server) *azeventgrid.ClientOptions {
	return &azeventgrid.ClientOptions{ClientOptions: policy.ClientOptions{Transport: srv.Client()}}
}

// azureReceiver is a real Event Grid receiver: it answers the validation
// handshake as Azure's docs say (echoing the code) and passes on the
// Event Grid events it gets, decoded with Azure's own type.
func azureReceiver(t *testing.T) (*httptest.Server, <-chan azeventgrid.Event) {
	got := make(chan azeventgrid.Event, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []azeventgrid.Event
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &evs); err != nil || len(evs) != 1 {
			t.Errorf("receiver: %v: %s", err, b)
			return
		}
		if *evs[0].EventType == eventgrid.ValidationEventType {
			data, _ := evs[0].Data.(map[string]any)
			_ = json.NewEncoder(w).Encode(map[string]any{"validationResponse": data["validationCode"]})
		}
		got <- evs[0]
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// ceReceiver passes on the CloudEvents it gets, decoded with Azure's type.
func ceReceiver(t *testing.T) (*httptest.Server, <-chan messaging.CloudEvent) {
	got := make(chan messaging.CloudEvent, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev messaging.CloudEvent
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("receiver: %v: %s", err, b)
			return
		}
		got <- ev
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// receive takes n values off ch.
func receive[T any](t *testing.T, what string, ch <-chan T, n int) []T {
	t.Helper()
	var out []T
	for len(out) < n {
		select {
		case v := <-ch:
			out = append(out, v)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: got %d of %d", what, len(out), n)
		}
	}
	return out
}

// putEventGrid makes an Event Grid subscription with the publisher's
// aeg-sas-key, as an Azure user would with any HTTP client.
func putEventGrid(t *testing.T, srv *httptest.Server, p publisher, name, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/eventgrid/subscriptions/"+name, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("aeg-sas-key", p.key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("PUT %s: %s %s", name, resp.Status, b)
	}
}

// TestAzureSDKPublishes: Azure's Event Grid publisher SDK, unchanged but
// for its endpoint, publishes an Event Grid batch with the account's API
// key (aeg-sas-key) and a CloudEvents batch with a SAS token, over TLS, to
// the API in production mode; an expired and a forged SAS token get 401s.
// A real worker delivers every event to both subscriptions, whose
// receivers decode them with Azure's types; every Event Grid event carries
// the account's topic (here a custom HOOKRELAY_EVENTGRID_TOPIC).
func TestAzureSDKPublishes(t *testing.T) {
	t.Parallel()
	const template = "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.EventGrid/topics/t-{account}"
	srv, e := azureAPI(t, template)
	p := newPublisher(t, e, "azure")
	topic := eventgrid.Topic(template, p.account)
	egRcv, egGot := azureReceiver(t)
	ceRcv, ceGot := ceReceiver(t)
	putEventGrid(t, srv, p, "eg-orders", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"`+
		egRcv.URL+`"}},"filter":{"includedEventTypes":["order.created"]}}}`)
	if v := receive(t, "validation event", egGot, 1)[0]; *v.Topic != topic || *v.EventType != eventgrid.ValidationEventType {
		t.Fatalf("validation event %+v, want topic %s", v, topic)
	}
	putEventGrid(t, srv, p, "ce-orders", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"`+
		ceRcv.URL+`","hookrelayPreValidated":true}},"eventDeliverySchema":"CloudEventSchemaV1_0"}}`)

	ctx := context.Background()
	keyClient, err := azeventgrid.NewClientWithSharedKeyCredential(srv.URL+"/eventgrid/events", azcore.NewKeyCredential(p.key), azureOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	_, err = keyClient.PublishEvents(ctx, []azeventgrid.Event{egEvent("eg-1"), egEvent("eg-2")}, nil)
	if err != nil {
		t.Fatalf("PublishEvents with the key: %v", err)
	}
	endpoint := srv.URL + "/eventgrid/events?account=" + p.account
	sasClient := func(sas string) *azeventgrid.Client {
		c, err := azeventgrid.NewClientWithSAS(endpoint, azcore.NewSASCredential(sas), azureOptions(srv))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	valid := azureSAS(endpoint, p.sasKey, time.Now().Add(time.Hour))
	if _, err := sasClient(valid).PublishCloudEvents(ctx, []messaging.CloudEvent{ceEvent(t, "ce-1"), ceEvent(t, "ce-2")}, nil); err != nil {
		t.Fatalf("PublishCloudEvents with a SAS token: %v", err)
	}
	forgedKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for what, sas := range map[string]string{
		"expired": azureSAS(endpoint, p.sasKey, time.Now().Add(-time.Minute)),
		"forged":  azureSAS(endpoint, forgedKey, time.Now().Add(time.Hour)),
	} {
		_, err := sasClient(sas).PublishEvents(ctx, []azeventgrid.Event{egEvent("refused-" + what)}, nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s SAS token: %v, want a 401", what, err)
		}
	}
	checkEventGridEvents(t, receive(t, "Event Grid deliveries", egGot, 4), topic)
	checkCloudEvents(t, receive(t, "CloudEvents deliveries", ceGot, 4), topic)
}

func egEvent(id string) azeventgrid.Event {
	typ, subject, version, at := "order.created", "/orders/"+id, "1.0", time.Now()
	return azeventgrid.Event{ID: &id, EventType: &typ, Subject: &subject, DataVersion: &version, EventTime: &at,
		Data: map[string]string{"order": id}}
}

func ceEvent(t *testing.T, id string) messaging.CloudEvent {
	ev, err := messaging.NewCloudEvent("/shop/orders", "order.created", map[string]string{"order": id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev.ID = id
	return ev
}

// checkEventGridEvents: the Event Grid subscription got the four events,
// none refused, each with the account's topic and its data.
func checkEventGridEvents(t *testing.T, evs []azeventgrid.Event, topic string) {
	t.Helper()
	var ids []string
	for _, ev := range evs {
		ids = append(ids, *ev.ID)
		data, _ := ev.Data.(map[string]any)
		if data["order"] != *ev.ID || *ev.Topic != topic || *ev.EventType != "order.created" || *ev.MetadataVersion != "1" {
			t.Errorf("Event Grid event %s: topic %s, type %s, data %v", *ev.ID, *ev.Topic, *ev.EventType, ev.Data)
		}
	}
	slices.Sort(ids)
	if strings.Join(ids, ",") != "ce-1,ce-2,eg-1,eg-2" {
		t.Errorf("Event Grid events %v", ids)
	}
}

// checkCloudEvents: the CloudEvents subscription got the four events, each
// with its data; the source of those published as CloudEvents is their
// own, that of those published in the Event Grid schema the account's
// topic.
func checkCloudEvents(t *testing.T, evs []messaging.CloudEvent, topic string) {
	t.Helper()
	var ids []string
	for _, ev := range evs {
		ids = append(ids, ev.ID)
		want := topic
		if strings.HasPrefix(ev.ID, "ce-") {
			want = "/shop/orders"
		}
		var data map[string]string
		raw, _ := ev.Data.([]byte)
		if err := json.Unmarshal(raw, &data); err != nil || data["order"] != ev.ID || ev.Source != want || ev.Type != "order.created" {
			t.Errorf("CloudEvent %s: source %s (want %s), data %s", ev.ID, ev.Source, want, raw)
		}
	}
	slices.Sort(ids)
	if strings.Join(ids, ",") != "ce-1,ce-2,eg-1,eg-2" {
		t.Errorf("CloudEvents %v", ids)
	}
}

// sendSAS makes one request with an Event Grid credential header.
func sendSAS(t *testing.T, e *echo.Echo, method, path, header, value string) (int, map[string]any) {
	t.Helper()
	return sendCT(t, e, method, path, header, value, "application/json", `[]`)
}

// TestEventGridCredentialsRefused: what is wrong with an Event Grid
// credential is said, in a 401 naming its header, without the secrets.
func TestEventGridCredentialsRefused(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	p := newPublisher(t, e, "refused")
	e2 := validated(t, &Server{Store: testenv.Store(t), Logger: testenv.Logger(), Auth: Auth{AdminKey: testAdminKey}})
	res := "https://hooks.example.com/eventgrid/events?account=" + p.account
	ok := azureSAS(res, p.sasKey, time.Now().Add(time.Hour))
	cases := []struct {
		name, header, value, field, says string
		e                                *echo.Echo
	}{
		{"none", "", "", "Authorization", "aeg-sas-token", e},
		{"empty key", "aeg-sas-key", " ", "aeg-sas-key", "one of the account's API keys", e},
		{"bad key", "aeg-sas-key", p.key + "x", "aeg-sas-key", "not a valid API key", e},
		{"SAS key as key", "aeg-sas-key", p.sasKey, "aeg-sas-key", "not a valid API key", e},
		{"not a token", "aeg-sas-token", "hello", "aeg-sas-token", "no signature", e},
		{"no account", "aeg-sas-token", azureSAS("https://h/eventgrid/events", p.sasKey, time.Now().Add(time.Hour)), "aeg-sas-token", "names no account", e},
		{"bad expiry", "aeg-sas-token", strings.Replace(ok, "&e=", "&e=x", 1), "aeg-sas-token", "expiry", e},
		{"expired", "aeg-sas-token", azureSAS(res, p.sasKey, time.Now().Add(-time.Second)), "aeg-sas-token", "expired at", e},
		{"other route", "aeg-sas-token", azureSAS("https://h/eventgrid/subscriptions?account="+p.account, p.sasKey, time.Now().Add(time.Hour)), "aeg-sas-token", "not for /eventgrid/events", e},
		{"other account", "aeg-sas-token", azureSAS(res+"x", p.sasKey, time.Now().Add(time.Hour)), "aeg-sas-token", "signature is not valid", e},
		{"tampered", "aeg-sas-token", strings.Replace(ok, "%3Facc", "%3Fapi-version%3D1%26acc", 1), "aeg-sas-token", "signature is not valid", e},
		{"as Authorization", "Authorization", "SharedAccessSignature " + strings.Replace(ok, "&s=", "&s=A", 1), "Authorization", "not a base64", e},
		{"SAS off", "aeg-sas-token", ok, "aeg-sas-token", "HOOKRELAY_EVENTGRID_SAS_SECRET", e2},
	}
	for _, c := range cases {
		code, out := sendSAS(t, c.e, http.MethodPost, "/eventgrid/events", c.header, c.value)
		errObj, _ := out["error"].(map[string]any)
		msg := str(errObj["message"])
		if code != http.StatusUnauthorized || str(errObj["field"]) != c.field || !strings.Contains(msg, c.says) ||
			strings.Contains(msg, p.key) || strings.Contains(msg, p.sasKey) {
			t.Errorf("%s: %d %v, want a 401 on %s saying %q", c.name, code, out, c.field, c.says)
		}
	}
	for _, c := range []struct{ header, value string }{
		{"aeg-sas-key", p.key}, {"aeg-sas-token", ok}, {"Authorization", "SharedAccessSignature " + ok},
	} {
		if code, out := sendSAS(t, e, http.MethodPost, "/eventgrid/events", c.header, c.value); code != http.StatusBadRequest {
			t.Errorf("%s: %d %v, want past authentication (to the empty batch's 400)", c.header, code, out)
		}
	}
	if code, out := sendSAS(t, e, http.MethodPost, "/v1/events", "aeg-sas-key", p.key); code != http.StatusUnauthorized {
		t.Errorf("aeg-sas-key on /v1: %d %v, want 401 (Event Grid routes only)", code, out)
	}
	other := newPublisher(t, e, "other")
	code, out := sendSAS(t, e, http.MethodPost, "/eventgrid/events?account="+p.account, "aeg-sas-key", other.key)
	if code != http.StatusForbidden {
		t.Errorf("another account's key on ?account=%s: %d %v, want 403", p.account, code, out)
	}
}

// TestSASKeyRevoked: a SAS token for /eventgrid covers the subscription
// routes; once its key is revoked, it is refused.
func TestSASKeyRevoked(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	p := newPublisher(t, e, "revoked")
	res := "https://h/eventgrid?account=" + p.account
	tok := azureSAS(res, p.sasKey, time.Now().Add(time.Hour))
	if code, out := sendSAS(t, e, http.MethodGet, "/eventgrid/subscriptions", "aeg-sas-token", tok); code != http.StatusOK {
		t.Fatalf("a token for /eventgrid on the subscriptions: %d %v", code, out)
	}
	if code, out := send(t, e, http.MethodDelete, "/v1/accounts/"+p.account+"/keys/"+p.keyID, "Bearer "+testAdminKey, ""); code != http.StatusOK {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if code, out := sendSAS(t, e, http.MethodGet, "/eventgrid/subscriptions", "aeg-sas-token", tok); code != http.StatusUnauthorized {
		t.Fatalf("revoked key's token: %d %v", code, out)
	}
}
