// Package testapi serves hookrelay's real HTTP API to the tests of its
// clients (the Go client, the CLI): on a real store and the shared Temporal
// dev server, over a loopback httptest server. It is apart from testenv
// because it imports api, whose own tests import testenv.
package testapi

import (
	"net/http/httptest"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// AdminKey is the admin key of the APIs this package serves; they need
// credentials (this key, or an account's API key) on every /v1 route.
const AdminKey = "testapi-admin-key-0123456789abcdef"

// Serve serves the API on st and c, starting deliveries with s (nil: on the
// test's own task queues), until the test ends; it returns the base URL.
func Serve(t testing.TB, st *store.Store, c client.Client, s *starter.Starter) string {
	t.Helper()
	if s == nil {
		s = testenv.Starter(t, c, st)
	}
	srv := httptest.NewServer(api.New(&api.Server{Store: st, Temporal: c, Starter: s, Logger: testenv.Logger(),
		Auth: api.Auth{AdminKey: AdminKey}, Egress: testenv.Egress()}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Start serves the API on a fresh database, with a worker making its
// deliveries on the test's own task queues; it returns the base URL and the
// store.
func Start(t testing.TB) (string, *store.Store) {
	t.Helper()
	st, c := testenv.Store(t), testenv.Client(t)
	s := testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 20})
	return Serve(t, st, c, s), st
}
