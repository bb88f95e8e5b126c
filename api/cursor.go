package api

import (
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// Page tokens are input like any other: every one is checked whole before
// anything is looked up with it, and a bad one is a 400 naming its
// parameter. The /v1 lists' cursor is the id of the previous page's last
// row; SAP's nextPage token is base64url("<RFC 3339 time>|<delivery id>").

// maxPageToken bounds a nextPage token (a real one is about 80 characters).
const maxPageToken = 256

// listCursor reads a /v1 list's cursor, the id of a row of the list's kind
// (prefix, as store.NewID makes them).
func listCursor(c echo.Context, prefix string) (string, error) {
	v := c.QueryParam("cursor")
	if v == "" || store.IsID(prefix, v) {
		return v, nil
	}
	return "", invalid("cursor", "cursor must be the next_cursor of the previous page")
}

// encodeCursor makes the SAP page token that starts after d.
func encodeCursor(d store.QueuedDelivery) string {
	raw := d.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + d.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeCursor reads an SAP page token; "" starts at the oldest.
func decodeCursor(token string) (store.QueueCursor, error) {
	if token == "" {
		return store.QueueCursor{}, nil
	}
	bad := invalid("nextPage", "nextPage must be a token from the %s header", HeaderNextPage)
	if len(token) > maxPageToken {
		return store.QueueCursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || !utf8.Valid(raw) {
		return store.QueueCursor{}, bad
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil || !store.IsID("dlv", id) {
		return store.QueueCursor{}, bad
	}
	return store.QueueCursor{CreatedAt: t, ID: id}, nil
}
