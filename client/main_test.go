package client_test

import (
	"os"
	"testing"

	"github.com/hookrelay/hookrelay/testenv"
)

// TestMain stops the PostgreSQL and Temporal servers the tests started.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
