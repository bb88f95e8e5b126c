package api

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookrelay/hookrelay/store"
)

// FuzzPageToken: issue 27. The SAP page-token decoder takes any string:
// it never panics; what it refuses is a 400 naming nextPage; what it
// accepts is a delivery id and a time, which encode back to a token that
// decodes to the same cursor. `make fuzz` runs it.
func FuzzPageToken(f *testing.F) {
	for _, raw := range []string{"2026-01-01T00:00:00Z|dlv_0123456789abcdef0123", "2026-01-01T00:00:00Z|a\x00b",
		"2026-01-01T00:00:00Z|\xff\xfe", "10000-01-01T00:00:00Z|dlv_0123456789abcdef0123", "|", ""} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(raw)))
	}
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, token string) {
		cur, err := decodeCursor(token)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 || e.Field != "nextPage" {
				t.Fatalf("%q: %v, want a 400 naming nextPage", token, err)
			}
			return
		}
		if token == "" {
			return
		}
		if !store.IsID("dlv", cur.ID) || !utf8.ValidString(cur.ID) || cur.CreatedAt.Year() > 9999 {
			t.Fatalf("%q accepted as %+v", token, cur)
		}
		again, err := decodeCursor(encodeCursor(store.QueuedDelivery{ID: cur.ID, CreatedAt: cur.CreatedAt}))
		if err != nil || again.ID != cur.ID || !again.CreatedAt.Equal(cur.CreatedAt.UTC().Truncate(time.Nanosecond)) {
			t.Fatalf("%q: %+v does not encode back (%+v, %v)", token, cur, again, err)
		}
	})
}
