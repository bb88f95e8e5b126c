package console_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Hostile text, as event data, a receiver's answer and its headers carry it:
// each would run a script if a page put it in its markup unescaped.
const (
	hostileScript = `<script>alert(1);window.hostile=1</script>`
	hostileImg    = `"><img src=x onerror="alert(2);window.hostile=2">`
	hostileURL    = `javascript:alert(3);window.hostile=3`
)

// hostile publishes an event full of hostile text to a receiver that
// answers with more, and returns the delivery's id once its attempt is
// recorded.
func hostile(t *testing.T, s *server, key string) (eventID, deliveryID string) {
	t.Helper()
	rcv := newReceiver(t)
	rcv.answer(func(w http.ResponseWriter) {
		w.Header().Set("X-Hostile", hostileImg)
		w.Header().Set("Location", hostileURL)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(hostileScript + hostileImg + `<a href="` + hostileURL + `">x</a>`))
	})
	if code, out := s.api(t, key, http.MethodPost, "/v1/subscriptions", map[string]any{
		"url": rcv.URL + "/" + hostileImg, "event_types": []string{"evil" + hostileScript}}); code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	eventID = `ev"><img src=x onerror=alert(1)>`
	code, out := s.api(t, key, http.MethodPost, "/v1/events", map[string]any{"id": eventID,
		"type": "evil" + hostileScript, "subject": hostileImg,
		"data": map[string]any{"script": hostileScript, "img": hostileImg, "url": hostileURL, hostileImg: 1}})
	if code != http.StatusAccepted {
		t.Fatalf("publish: %d %v", code, out)
	}
	deliveryID = out["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	waitFor(t, "the hostile receiver's answer recorded", func() bool {
		_, d := s.api(t, key, http.MethodGet, "/v1/deliveries/"+deliveryID, nil)
		as, _ := d["attempt_list"].([]any)
		return len(as) > 0 && as[0].(map[string]any)["status_code"] == float64(http.StatusTeapot)
	})
	return eventID, deliveryID
}

// markup finds hostile text that a page let through as markup.
var markup = regexp.MustCompile(`(?i)<script>alert|<img\s|href="javascript:|href=.javascript:`)

// TestHostileContentIsText: the pages that show an event, its delivery and
// the receiver's answer (body and headers) show hostile text escaped, as
// text, never as markup or a javascript: link; the links to the hostile
// event id lead to it.
func TestHostileContentIsText(t *testing.T) {
	t.Parallel()
	s := newServer(t, true)
	eventID, deliveryID := hostile(t, s, "")
	w := newWeb(t, s)
	_, events := w.get("/console/events")
	link := regexp.MustCompile(`href="(/console/events/ev[^"]+)"`).FindStringSubmatch(events)
	if link == nil {
		t.Fatalf("no link to the event on the events page")
	}
	pages := []string{"/console/deliveries/" + deliveryID, "/console/deliveries", "/console/events",
		html.UnescapeString(link[1]), "/console/subscriptions", "/console/endpoints"}
	for _, path := range pages {
		resp, body := w.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
			continue
		}
		if m := markup.FindString(body); m != "" {
			t.Errorf("GET %s: hostile markup %q in the page", path, m)
		}
	}
	_, delivery := w.get("/console/deliveries/" + deliveryID)
	for _, want := range []string{html.EscapeString(hostileScript), html.EscapeString(hostileImg), html.EscapeString(hostileURL), "418"} {
		if !strings.Contains(delivery, want) {
			t.Errorf("the delivery page does not show %q as text", want)
		}
	}
	if _, ev := w.get(html.UnescapeString(link[1])); !strings.Contains(ev, html.EscapeString(eventID)) {
		t.Errorf("the event page of %q does not show it", eventID)
	}
}
