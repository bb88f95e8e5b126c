package api

import (
	"os"
	"testing"

	"github.com/hookrelay/hookrelay/testenv"
)

// TestMain stops the PostgreSQL and Temporal servers the tests started. It is
// the package's only TestMain (internal and external test files share it).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
